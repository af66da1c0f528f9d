"""The one grading table: every rule fuzz and security enforce, its grade, what it enforces
and where it comes from. The same rule has the same grade whichever command finds it.

Principles the table follows:

- a rule the MCP specification or JSON-RPC states with MUST / SHOULD gets ``spec-must`` /
  ``spec-should``; a threat the specification leaves open, ``security``; this project's own
  conventions, ``house``; anything a reader should look at but that breaks no rule, ``warning``;
- **type coercion is one rule** (``strict_types``, warning): a string whose text is a value of
  the declared type (``"5"`` for an integer, ``"true"`` for a boolean, ``'["a"]'`` for an array,
  ``'{}'`` for an object) converted instead of refused. Lax validators (pydantic, the official
  SDKs, FastMCP's JSON pre-parsing) do this, and the converted value is schema-valid. Any other
  schema-breaking argument accepted is ``input_refused`` (spec-must);
- **an exception's text is one rule** (``no_crash``, spec-should: a tool reports its failures
  as results it wrote, and an error text that is an exception's (an OS error number such as
  ``[Errno 2]``, an exception class name, an internal path, the framework's wording for an
  unhandled exception) or an internal JSON-RPC error shows one it did not handle); a stack
  trace reaching the client is in addition ``no_stack_trace`` (security: the spec asks servers
  to sanitise outputs). Fuzz and security read error texts with the same signs
  (evals/conformance/calls.py);
- the HTTP transport rules grade by the answer (a foreign Origin served is spec-must, refused
  with the wrong status a warning), so their family states the grade per finding.
"""

from __future__ import annotations

from dataclasses import dataclass

from ocm_common.findings import GRADES, Grade
from ocm_common.registry import Registry

SPEC = "https://modelcontextprotocol.io/specification/2025-11-25"
TOOL_ERRORS = f"{SPEC}/server/tools#error-handling"
OUTPUT_SCHEMA = f"{SPEC}/server/tools#output-schema"
STRUCTURED = f"{SPEC}/server/tools#structured-content"
TOOLS_SECURITY = f"{SPEC}/server/tools#security-considerations"
TOOL_NAMES = f"{SPEC}/server/tools#tool-names"
LIST_CHANGED = f"{SPEC}/server/tools#list-changed-notification"
TIMEOUTS = f"{SPEC}/basic/lifecycle#timeouts"
STDIO = f"{SPEC}/basic/transports#stdio"
TRANSPORT_SECURITY = f"{SPEC}/basic/transports#security-warning"
AUTH_ERRORS = f"{SPEC}/basic/authorization#error-handling"
ROOTS_SECURITY = f"{SPEC}/client/roots#security-considerations"
BEST_PRACTICES = f"{SPEC}/basic/security_best_practices"
JSONRPC_RESPONSE = "https://www.jsonrpc.org/specification#response_object"
MCP_SCAN = "https://github.com/invariantlabs-ai/mcp-scan"
HOUSE = "ARCHITECTURE.md (this project's tool conventions)"


@dataclass(frozen=True)
class GradedRule:
    name: str
    grade: Grade
    enforces: str  # the rule in one sentence
    reference: str


TABLE: Registry[GradedRule] = Registry("graded rule")


def _rule(name: str, grade: Grade, enforces: str, reference: str) -> None:
    TABLE.add(name, GradedRule(name, grade, enforces, reference))


def grade_of(name: str) -> Grade:
    return TABLE[name].grade


def reference_of(name: str) -> str:
    return TABLE[name].reference


# ------------------------------------------------------------------ the protocol (both commands)
_rule(
    "answers",
    "spec-must",
    "every request gets a response (a result or a JSON-RPC error); the connection stays up",
    JSONRPC_RESPONSE,
)
_rule(
    "still_serving",
    "spec-must",
    "after a case the server still answers tools/list",
    JSONRPC_RESPONSE,
)
_rule("no_hang", "warning", "a call answers within the client's time limit", TIMEOUTS)
_rule(
    "answers_in_time",
    "spec-must",
    "a call with arguments the inputSchema allows gets its response within the client's time "
    "limit (a hang on a schema-valid input is no response)",
    JSONRPC_RESPONSE,
)
_rule(
    "readable_reply",
    "spec-must",
    "every message the server sends is UTF-8 JSON-RPC (no invalid bytes, no lone surrogate; "
    "on stdio nothing else on stdout)",
    STDIO,
)
_rule(
    "no_crash",
    "spec-should",
    "a failure inside a tool is reported as a tool result with isError (not an internal "
    "JSON-RPC error, not an exception's text: [Errno n], a class name, a path, a traceback)",
    TOOL_ERRORS,
)
_rule(
    "output_schema",
    "spec-must",
    "a tool that publishes an outputSchema returns structuredContent that conforms to it",
    OUTPUT_SCHEMA,
)
_rule(
    "text_for_structured",
    "spec-should",
    "a result with structuredContent also carries it as text (its JSON; a wrapped single "
    "value may be its plain text)",
    STRUCTURED,
)
_rule(
    "input_refused",
    "spec-must",
    "arguments that break the published inputSchema are refused (servers must validate inputs)",
    TOOLS_SECURITY,
)
_rule(
    "strict_types",
    "warning",
    "a string holding a value of the declared type ('5' for 5, 'true', '[\"a\"]' for an array) "
    "is refused rather than converted",
    TOOLS_SECURITY,
)
_rule(
    "input_error_as_result",
    "spec-should",
    "an input validation failure is a tool result with isError, so the model can correct it",
    TOOL_ERRORS,
)
_rule("tool_name_format", "spec-should", "tool names are 1-128 of A-Z a-z 0-9 _ - .", TOOL_NAMES)

# ------------------------------------------------------------------ security
_rule(
    "no_stack_trace",
    "security",
    "no stack trace reaches the client (tool outputs are sanitised)",
    TOOLS_SECURITY,
)
_rule(
    "no_secret_leak",
    "security",
    "no secret from the server's environment (the planted canary) or credential-shaped string "
    "in a result or error",
    TOOLS_SECURITY,
)
_rule(
    "canary_leak",
    "security",
    "the canary planted in the server's environment never comes back",
    TOOLS_SECURITY,
)
_rule(
    "key_pattern_leak",
    "security",
    "no credential-shaped string in a result or error",
    TOOLS_SECURITY,
)
_rule("server_crash", "security", "the server survives any argument", TOOLS_SECURITY)
_rule("unbounded_time", "security", "extreme arguments answer within the bound", TOOLS_SECURITY)
_rule(
    "unbounded_memory", "security", "extreme arguments stay within the memory bound", TOOLS_SECURITY
)
_rule(
    "path_escape",
    "security",
    "a path argument never reaches outside the declared root",
    ROOTS_SECURITY,
)
_rule(
    "tool_surface_changed",
    "security",
    "a tool's description and schema do not change after calls (rug pull)",
    LIST_CHANGED,
)
_rule("invisible_unicode", "security", "no invisible characters in tool texts", MCP_SCAN)
_rule(
    "hidden_instructions", "security", "no instructions to the model hidden in tool texts", MCP_SCAN
)
_rule(
    "tool_shadowing",
    "security",
    "no tool text names another tool (or its action) and tells the model how to use it",
    MCP_SCAN,
)
_rule(
    "path_escape_expansion",
    "security",
    "a path argument's ~, ~user, $HOME or ${VAR} never reaches outside the declared root",
    ROOTS_SECURITY,
)
_rule(
    "path_escape_encoded",
    "security",
    "a percent-encoded .., mixed separators or a file:// URL never reach outside the root",
    ROOTS_SECURITY,
)
_rule(
    "path_escape_symlink",
    "security",
    "a symbolic link inside the root is never followed out of it",
    ROOTS_SECURITY,
)
_rule(
    "command_execution",
    "security",
    "no argument is run as a shell command or code (a marker only execution produces)",
    BEST_PRACTICES,
)
_rule(
    "outbound_request",
    "security",
    "no tool fetches a URL or host the caller chose (a hit on the harness's loopback listener)",
    BEST_PRACTICES,
)
_rule(
    "undeclared_recipient",
    "security",
    "a sending tool sends only where its arguments say (no recipient, host or path nobody named)",
    TOOLS_SECURITY,
)
_rule(
    "annotation_contradicted",
    "security",
    "a tool annotated read-only or closed-world does none of the capabilities above",
    f"{SPEC}/server/tools#tool-annotations",
)

_rule(
    "tool_unreachable",
    "warning",
    "some probe reaches every callable tool (a tool whose every call was refused for its "
    "arguments was not checked)",
    TOOLS_SECURITY,
)
_rule(
    "path_expanded_refused",
    "warning",
    "a path argument's ~, $HOME or .. resolved outside the root and then refused: the answer "
    "names the location (no escape, a disclosure)",
    ROOTS_SECURITY,
)
_rule(
    "result_injection",
    "security",
    "no tool result speaks to the model: instruction tags (<IMPORTANT>), 'ignore previous "
    "instructions', 'you must now', chat-template markers, hidden tag characters",
    TOOLS_SECURITY,
)
_rule(
    "information_leak",
    "security",
    "no result or error discloses the server's internals: a stack trace, or an absolute path "
    "outside the declared root that exists there and that no argument or description named",
    TOOLS_SECURITY,
)
_rule(
    "undeclared_destination",
    "security",
    "a result names no recipient, host or path it sent or copied to that neither the "
    "arguments nor the tool's description named",
    TOOLS_SECURITY,
)
_rule(
    "result_too_large",
    "security",
    "a result stays within the size bound (1 MB unless --max-result-bytes says otherwise)",
    TOOLS_SECURITY,
)
_rule(
    "text_not_utf8",
    "spec-must",
    "every message is UTF-8 JSON: no bytes that are not UTF-8, no lone surrogate in a string",
    f"{SPEC}/basic/transports",
)
_rule(
    "file_written",
    "warning",
    "a call's writes to the files the server can reach (its root, HOME, temp folder) are listed",
    f"{SPEC}/server/tools#tool-annotations",
)
_rule(
    "read_only_write",
    "security",
    "a tool annotated readOnlyHint: true creates, changes or deletes no file",
    f"{SPEC}/server/tools#tool-annotations",
)

# ------------------------------------------------------------------ house rules (fuzz)
_rule(
    "text_mirrors_structured",
    "house",
    "the text content is exactly the JSON of structuredContent",
    HOUSE,
)
_rule(
    "not_refused",
    "house",
    "a schema-valid call is never refused as invalid input (the schema states every constraint)",
    HOUSE,
)
_rule(
    "no_internal_error",
    "house",
    "a schema-valid call fails only as 'not found' (an id the corpus lacks)",
    HOUSE,
)
_rule("names_every_field", "house", "an input error names every broken field", HOUSE)
_rule("allowed_values", "house", "an input error lists a broken enum field's allowed values", HOUSE)
_rule("error_in_time", "house", "an input error comes back within the error time limit", HOUSE)


def table_text() -> str:
    """The table as help text: grades first, then each rule with its grade."""
    lines = ["grades: " + ", ".join(GRADES) + " (the first three fail a run)"]
    for rule in TABLE.values():
        lines.append(f"  {rule.name}: {rule.grade}")
    return "\n".join(lines)

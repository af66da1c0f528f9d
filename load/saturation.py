"""Locustfile for the `saturation` profile: the MCP user plus the stepping load shape."""

from load.locustfile import McpUser
from load.saturation_shape import SaturationShape

__all__ = ["McpUser", "StepLoad"]


class StepLoad(SaturationShape):
    abstract = False

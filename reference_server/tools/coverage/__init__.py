"""coverage.answer: the composed tool (answer), its intents (routing), the patient context
(patient), ODB eligibility (eligibility) and the synthesis from the domain tools' responses."""

"""Which stored facts a new fact may make out of date, found without an LLM.

Candidates by embedding (:mod:`.updates`), the English slot pre-filter (:mod:`.slots`)
and the cues that say a state changed (:mod:`.update_cues`, phrases in
:mod:`.update_phrases`). The Judge node that asks the model about the rest is
:mod:`lamina.agents.ingest.nodes.conflicts`.
"""

"""Prompt templates as data: ``ChatPromptTemplate`` / ``PromptTemplate`` constants.

* :mod:`.construction`: the write path (Constructor, episode boundary, conflict check).
* :mod:`.recall`: the read path (Judge and draft answer, query rewrite, Refresher, answer).
* :mod:`.structured`: the JSON instructions and the repair request of the
  structured-output helper (:mod:`lamina.llm.structured`).
* :mod:`.agents`: tool descriptions and the memory block of the LangChain integration.

Nothing here imports the rest of lamina; the nodes fill the templates' variables.
tests/prompts/test_prompts.py (write path) and tests/llm/test_structured.py (the helper's two) check
that a template takes exactly the variables its caller supplies.
"""

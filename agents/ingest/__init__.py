"""The write path: its nodes, and the construction rules grouped by concern.

* :mod:`.nodes`: the LangGraph nodes (raw writer, episode trigger, constructor, Judge,
  refresher) and the episode and scene work only the constructor does.
* :mod:`.extraction`: the construction call, how its reply is read, what it becomes.
* :mod:`.ownership`: whose each note, title and summary is (no LLM).
* :mod:`.supersession`: which stored facts a new one may update (no LLM).
* :mod:`.evidence`: whether the source turns support a note (no LLM).
* :mod:`.schemas`: the replies the write path's model calls are asked for.

Imports go down this list only: nodes > extraction > ownership > evidence, and
supersession > evidence. The text rules (all but the nodes and extraction's model calls)
load nothing of lamina.llm.
"""

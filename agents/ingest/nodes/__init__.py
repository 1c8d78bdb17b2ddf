"""The write path's LangGraph nodes: raw writer, episode trigger, constructor, Judge, refresher.

The constructor's episode synthesis (:mod:`.episodes`) and scene clustering
(:mod:`.scenes`) sit beside it, since only the nodes use them. The nodes call the
model; what they read a reply with, and the rules they apply, are the packages below.
"""

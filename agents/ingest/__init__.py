"""The write path's nodes and the construction helpers only they use.

Nodes: raw writer, episode trigger, constructor, conflict check, refresher. Helpers:
owner, support, slots, update cues, the construction schemas.
"""

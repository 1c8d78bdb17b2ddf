"""The read path's nodes and the helpers only they use.

Nodes: retriever, judge, rewriter, answer, refresher. Helpers: pooling, premise checks,
the recall context and schemas.
"""

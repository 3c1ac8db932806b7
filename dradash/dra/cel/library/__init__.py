"""The libraries of Kubernetes' DRA CEL environment, one module per upstream library: each
declares its functions into the registry (``dradash.dra.cel.functions``, which registers them
in the apiserver's order) and implements them. ``cost`` and ``memory`` say what a call costs.
"""

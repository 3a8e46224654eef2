"""infercost: what an LLM workload costs, on an API or on your own GPUs."""

__version__ = "0.1.0"

"""Serving past one process and one machine: a Chroma server, nginx in front of replicas,
and benchmarks over synthetic corpus growth (`make bench SCALE=`)."""

"""Tracing: lazy arrays record HLO ops; materialisation compiles and runs them."""

"""Backends: registry, compiler/executable roles, transfer layer, executable cache."""

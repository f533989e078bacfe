"""Host round trips and device calls: the ops a device's compiler has no code for run on
the host, and those a library computes on the device (cuBLAS's products) run between the
graph's compiled code.

A backend lists them in its compiler's ``host_ops``, by the dtype kinds of their results
it lacks code for (llvm-nvptx: ``custom_call``, the LAPACK decompositions, until
cuSOLVER is called; the complex functions the host takes from its C library). When a
read of that device's graph finds such nodes (:func:`held`), :func:`run` computes each in
turn, in the order they were recorded: the pending values it takes are computed on the
device and copied to the host, the op runs on the host's backend, and its result is
copied back to the device as the node's value. The read then runs what is left of the
graph on the device. The caller's arrays stay on their device, with the host's bits for
those ops. PyTorch's CPU fallback and XLA's host offloading are the precedents; unlike
them nothing here is silent: every round trip is logged on
``plaidarray.compiles.host_round_trips`` (INFO, so ``PLAIDARRAY_EXPLAIN_COMPILES=1`` shows
it with the compile log), and docs/gpu.md lists the ops.

A device call (``Compiler.device_call``: llvm-nvptx's matrix products by cuBLAS) is
found and run alike, in the same order, but on the device: its operands computed there,
the library routine reads their buffers and writes its result's, and nothing is copied.

A traced function cannot hold a round trip or a device call: the device's compiler refuses
a module with one (``HostOpsError``), and ``jit`` then runs that function eagerly for the
signature, its reads splitting the graphs as above.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from ..backend import devices
from ..backend.devices import Device
from ..backend.executable import Compiler, runs_on_host
from ..hlo.ops.dot import through_transpose
from .node import GRAPH_LOCK, Node

LOG = logging.getLogger("plaidarray.compiles.host_round_trips")


def held(order: list[Node], compiler: Compiler) -> list[Node]:
    """The nodes of a walked graph (``order``: in the order they were recorded) that run on
    the host: those the compiler's ``host_ops`` lists, and each selection of a listed op of
    tuple shape (a ``custom_call``'s results: the call itself has no value of its own); and
    those a library computes on the device (:func:`_device_call`)."""
    host_ops, device_call_ops = compiler.host_ops, compiler.device_call_ops
    found = []
    for n in order:
        if n.buffer is not None:
            continue
        if n.op == "get_tuple_element":
            if runs_on_host(host_ops, n.operands[0].op, n.operands[0].shape):
                found.append(n)
        elif n.op != "custom_call" and runs_on_host(host_ops, n.op, n.shape):
            found.append(n)
        elif n.op in device_call_ops and _device_call(n, compiler) is not None:
            found.append(n)
    return found


def _device_call(n: Node, compiler: Compiler) -> Callable[[list], Any] | None:
    assert n.op is not None  # a pending node's
    return compiler.device_call(n.op, n.shape, tuple(o.shape for o in n.operands), n.attrs)


def run(nodes: list[Node], device: Device) -> None:
    """Give each of ``nodes`` (:func:`held`, in their order) its value: computed on the
    host and copied to ``device`` (kept on the host for a node of no device), the
    selections of one call running it once; or by a library on the device."""
    from .materialize import backend_for, materialize  # materialize calls this module

    host = devices.HOST[0]
    compiler = backend_for(device).compiler
    calls: dict[int, list[Node]] = {}
    for n in nodes:
        calls.setdefault(id(n.operands[0]) if n.op == "get_tuple_element" else id(n), []).append(n)
    for group in calls.values():
        if group[0].op in compiler.device_call_ops:
            _call_on_device(group[0], compiler, device)
            continue
        with GRAPH_LOCK:
            group = [n for n in group if n.buffer is None]  # another thread may have computed them
            if not group:
                continue
            first = group[0]
            call = first.operands[0] if first.op == "get_tuple_element" else first
            op, operands, attrs = call.op, call.operands, call.attrs
            indices = [n.attrs["index"] for n in group] if call is not first else []
        assert op is not None  # a pending node's
        # The device's operands computed there (no earlier node is held) and copied; those of
        # no device (a Python scalar's broadcast, which graphs share) join the host's graph.
        materialize([o for o in operands if o.buffer is None and o.device is device])
        inputs = tuple(Node.ready(_host_value(o, device), host) if o.device is device else o for o in operands)
        on_the_host = Node.apply(op, inputs, attrs)
        results = [Node.apply("get_tuple_element", (on_the_host,), {"index": i}) for i in indices] or [on_the_host]
        materialize(results)
        # A node of no device keeps the host's value: a host graph reading it later takes it as
        # host memory, and the device's run copies it in (``materialize._host_values``).
        values = [_host_value(r, host) for r in results]
        copies = [device.transfers.from_host(v, f"{op} on the host") if n.device is device else v
                  for n, v in zip(group, values)]
        with GRAPH_LOCK:
            for n, copy in zip(group, copies):
                if n.buffer is None:
                    n.set_buffer(copy)
        LOG.info("%s: %s has no code for %s (%s): %d operand(s) copied to the host, computed by %s, %d result(s) "
                 "copied back", device, backend_for(device).name, op, attrs["target"] if indices else first.shape.dtype,
                 len(operands), backend_for(host).name, len(results))


def _read_through(n: Node) -> tuple[tuple[Node, ...], dict]:
    """A product's operands and dimension numbers with each pending transpose among its
    operands read through: the transpose's operand, its batch and contracting dimensions
    permuted back, where its free dimensions keep their order (the result's layout), as
    the algebraic simplifier folds transposes into a product (``x.mT @ y`` then reads
    ``x`` with the library's transpose flag rather than a copy of it)."""
    operands, attrs = list(n.operands), dict(n.attrs)
    for side, name in enumerate(("lhs", "rhs")):
        o = operands[side]
        pending = o.buffer is None and o.op == "transpose"
        folded = through_transpose(attrs, name, o.attrs["permutation"]) if pending else None
        if folded is not None:
            operands[side], attrs = o.operands[0], folded
    return tuple(operands), attrs


def _call_on_device(n: Node, compiler: Compiler, device: Device) -> None:
    """Compute ``n`` by its device call, reading pending transposes through where the call
    takes that (:func:`_read_through`): its operands computed on ``device`` first."""
    from .materialize import materialize  # materialize calls this module

    with GRAPH_LOCK:
        if n.buffer is not None:  # another thread computed it
            return
        assert n.op is not None  # a pending node's
        operands, attrs = _read_through(n) if n.op == "dot_general" else (n.operands, n.attrs)
        call = compiler.device_call(n.op, n.shape, tuple(o.shape for o in operands), attrs)
        if call is None:  # read as recorded (as held found it: it depends on shapes and attributes alone)
            operands, call = n.operands, _device_call(n, compiler)
    assert call is not None
    materialize([o for o in operands if o.buffer is None])
    inputs = [o.buffer if o.device is device else device.transfers.from_host(np.asarray(o.buffer), "an operand")
              for o in operands]
    result = call(inputs)
    with GRAPH_LOCK:
        if n.buffer is None:
            n.set_buffer(result)
    LOG.debug("%s: %s computed by a library call on the device", device, n.op)


def _host_value(node: Node, device: Device) -> np.ndarray:
    """The value of a computed node of ``device`` (or of none) as a host array."""
    buffer = node.buffer
    assert buffer is not None  # computed by the caller
    return device.transfers.to_host(buffer) if node.device is device else buffer

"""The device model on two CPU devices (``backend/devices.py``; conftest asks for two):
where arrays are made, that results live where their operands live, that operations do
not mix devices, and that ``to_device`` copies."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import plaidarray as xp
from plaidarray.trace import node as node_module

pytestmark = pytest.mark.skipif(len(xp.__array_namespace_info__().devices()) < 2,
                                reason="needs PLAIDARRAY_CPU_DEVICES=2 (tests/conftest.py sets it)")

DEVICES = xp.__array_namespace_info__().devices()
HOME = xp.__array_namespace_info__().default_device()
OTHER = next(d for d in DEVICES if d != HOME)


def test_devices_are_named_and_compare_with_their_names():
    assert DEVICES[0] == "cpu" and DEVICES[1] == "cpu:1" and DEVICES[0] != DEVICES[1]
    assert str(DEVICES[1]) == "cpu:1" and repr(DEVICES[1]) == "Device('cpu:1')"
    assert {DEVICES[0]: 0}["cpu"] == 0  # hashed as their names
    assert pickle.loads(pickle.dumps(DEVICES[1])) is DEVICES[1]


CREATORS = {
    "asarray": lambda device: xp.asarray(np.arange(4.0), device=device),
    "asarray of a list": lambda device: xp.asarray([1, 2, 3], device=device),
    "zeros": lambda device: xp.zeros((2, 3), device=device),
    "ones": lambda device: xp.ones(3, dtype=xp.int32, device=device),
    "empty": lambda device: xp.empty(2, device=device),
    "full": lambda device: xp.full((2,), 7.0, device=device),
    "full of a 0-d array": lambda device: xp.full((), xp.asarray(2.0, device=device), device=device),
    "arange": lambda device: xp.arange(5, device=device),
    "linspace": lambda device: xp.linspace(0.0, 1.0, 5, device=device),
    "eye": lambda device: xp.eye(3, k=1, device=device),
    "fftfreq": lambda device: xp.fft.fftfreq(6, device=device),
    "rfftfreq": lambda device: xp.fft.rfftfreq(6, device=device),
    "from_dlpack": lambda device: xp.from_dlpack(np.arange(3.0), device=device),
}


@pytest.mark.parametrize("name", list(CREATORS))
def test_creation_functions_make_their_array_on_the_device_asked(backend, name):
    made_there = CREATORS[name](OTHER)
    assert made_there.device == OTHER
    made_here = CREATORS[name](None)
    assert made_here.device == HOME
    np.testing.assert_array_equal(np.asarray(made_there), np.asarray(made_here))
    with pytest.raises(ValueError, match=f"arrays on different devices, {OTHER} and {HOME}|"
                                         f"arrays on different devices, {HOME} and {OTHER}"):
        made_there + made_here


def test_like_functions_take_their_arguments_device(backend):
    x = xp.asarray(np.ones((2, 2)), device=OTHER)
    for made in (xp.zeros_like(x), xp.ones_like(x), xp.empty_like(x), xp.full_like(x, 3.0)):
        assert made.device == OTHER
    assert xp.zeros_like(x, device=HOME).device == HOME


def test_results_live_where_their_operands_live(backend):
    x = xp.asarray(np.arange(12.0).reshape(3, 4), device=OTHER)
    results = [x + 1.0, xp.exp(x) * 2, x @ x.T, xp.sum(x, axis=0), x[1:, ::2], xp.sort(x, axis=1),
               xp.linalg.solve(x.T @ x + xp.eye(4, device=OTHER), x[0]), xp.fft.rfft(x), xp.where(x > 3, x, 0.0),
               xp.concat([x, x]), xp.unique_values(x), xp.nonzero(x > 5)[0], x[xp.asarray([0, 2], device=OTHER)],
               xp.astype(x, xp.float32), xp.cumulative_sum(x, axis=1), x[0, 1], xp.tril(x)]
    for result in results:
        assert result.device == OTHER
    y = xp.asarray(np.arange(12.0).reshape(3, 4))
    np.testing.assert_array_equal(np.asarray(results[1]), np.asarray(xp.exp(y) * 2))


def test_operations_on_two_devices_raise_naming_both(backend):
    a, b = xp.asarray(np.ones(3)), xp.asarray(np.ones(3), device=OTHER)
    cases = [lambda: a + b, lambda: xp.stack([a, b]), lambda: xp.where(a > 0, a, b), lambda: a @ b,
             lambda: xp.concat([b, a])]
    for case in cases:
        with pytest.raises(ValueError, match=r"arrays on different devices, cpu(:1)? and cpu(:1)?; move one"):
            case()
    c = xp.zeros(3, device=OTHER)
    with pytest.raises(ValueError, match="arrays on different devices"):
        c[0:2] = a[0:2]
    np.testing.assert_array_equal(np.asarray(c), np.zeros(3))  # unchanged


def test_python_scalars_and_numpy_values_join_arrays_of_any_device(backend):
    b = xp.asarray(np.arange(3.0), device=OTHER)
    for result in (b * 2.5, 1 - b, xp.maximum(b, 0.5), b + np.float64(1.0), b[xp.asarray(1, device=OTHER)]):
        assert result.device == OTHER
    b[0] = 5.0
    assert b.device == OTHER and float(b[0]) == 5.0


def test_to_device_copies_and_leaves_the_original_alone(backend):
    x = xp.asarray(np.arange(4.0))
    y = x.to_device(OTHER)
    assert y.device == OTHER and x.device == HOME and x.to_device(HOME) is x
    y[0] = -1.0
    np.testing.assert_array_equal(np.asarray(x), np.arange(4.0))
    np.testing.assert_array_equal(np.asarray(y), [-1.0, 1.0, 2.0, 3.0])
    pending = xp.exp(x) + 1.0  # computed, then copied
    np.testing.assert_array_equal(np.asarray(pending.to_device(OTHER)), np.asarray(pending))
    with pytest.raises(ValueError, match="to_device: unsupported device 'tpu'"):
        x.to_device("tpu")


def test_asarray_and_astype_move_arrays_between_devices(backend):
    x = xp.asarray(np.arange(3.0), device=OTHER)
    assert xp.asarray(x) is x and xp.asarray(x, device=HOME).device == HOME
    with pytest.raises(ValueError, match="needs a copy, but copy=False"):
        xp.asarray(x, device=HOME, copy=False)
    moved = xp.astype(x, xp.int32, device=HOME)
    assert moved.device == HOME and moved.dtype == xp.int32
    assert xp.from_dlpack(x, device=HOME).device == HOME


def test_jit_runs_where_its_arguments_live():
    f = xp.jit(lambda u, v: u * v + 1.0)
    a, b = xp.asarray(np.ones(3), device=OTHER), xp.asarray(np.ones(3))
    assert f(a, a).device == OTHER
    with pytest.raises(ValueError, match="arrays on different devices"):
        f(a, b)


def test_nodes_recorded_in_python_check_devices_as_in_c():
    """``_graph.derive`` and its Python definition agree on the device rule."""
    a = xp.asarray(np.ones(2))._node
    b = xp.asarray(np.ones(2), device=OTHER)._node
    scalar = xp.asarray(1.0)._node
    scalar.device = None  # a value of no array's, as a Python scalar's
    for derive in {node_module.derive, node_module._derive_in_python}:
        assert derive("add", (b, scalar), {}, b.shape).device is b.device
        assert derive("add", (scalar, scalar), {}, b.shape).device is None
        with pytest.raises(ValueError, match=f"add: arrays on different devices, {HOME} and {OTHER}"):
            derive("add", (a, scalar, b), {}, b.shape)


def test_namespace_info_takes_each_device():
    info = xp.__array_namespace_info__()
    for device in info.devices():
        assert info.dtypes(device=device) == info.dtypes()
        assert info.default_dtypes(device=device) == info.default_dtypes()
    with pytest.raises(ValueError, match="unsupported device"):
        info.dtypes(device="gpu")


def test_the_default_device_is_chosen_by_its_setting_and_at_run_time():
    code = ("import numpy as np, plaidarray as xp\n"
            "assert xp.__array_namespace_info__().default_device() == 'cpu:1'\n"
            "assert xp.asarray([1.0]).device == 'cpu:1' and xp.zeros(2).device == 'cpu:1'\n"
            "xp.set_default_device('cpu')\n"
            "assert xp.ones(2).device == 'cpu'\n"
            "print('ok')\n")
    env = {**os.environ, "PLAIDARRAY_CPU_DEVICES": "2", "PLAIDARRAY_DEVICE": "cpu:1"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr
    env["PLAIDARRAY_DEVICE"] = "cpu:7"
    done = subprocess.run([sys.executable, "-c", "import plaidarray as xp; xp.zeros(1)"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "PLAIDARRAY_DEVICE: unsupported device 'cpu:7'" in done.stderr


class _Recording:
    """A device's transfers, with the calls made through them counted by name."""

    def __init__(self, inner):
        self.inner, self.calls = inner, []

    def __getattr__(self, name):
        method = getattr(self.inner, name)

        def call(*args, **kwargs):
            self.calls.append(name)
            return method(*args, **kwargs)
        return call


def test_buffers_come_and_go_through_their_devices_transfers(backend, monkeypatch):
    """Arrays are made, read, moved and written element by element through the transfers
    their device carries (``backend/transfer.py``): none of api/ or trace/ touches a
    device's buffer another way, so a platform with other buffers brings its own."""
    recording = _Recording(OTHER.transfers)
    monkeypatch.setattr(OTHER, "transfers", recording)
    x = xp.asarray(np.arange(6.0).reshape(2, 3), device=OTHER)
    assert "from_host" in recording.calls
    total = x * 2.0
    assert np.asarray(total + 0.0).tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    assert float(total[1, 2]) == 10.0
    assert {"to_host", "load_element"} <= set(recording.calls)
    moved = total.to_device(HOME)
    assert "copy_to" in recording.calls and moved.device == HOME
    writable = xp.zeros(3, device=OTHER) + 0.0
    np.asarray(writable[0])  # computed, held by this array alone
    writable[1] = 5.0
    assert "store_element" in recording.calls and np.asarray(writable).tolist() == [0.0, 5.0, 0.0]


def test_arrays_whose_memory_is_not_the_hosts_export_copies(backend, monkeypatch):
    """``np.asarray`` of an array on a device whose transfers are not the host's is a copy
    (its buffer is no NumPy memory to share); ``copy=False`` then says so."""
    x = xp.asarray(np.arange(3.0), device=OTHER) * 2.0
    monkeypatch.setattr(OTHER, "transfers", _Recording(OTHER.transfers))
    exported = np.asarray(x)
    assert exported.tolist() == [0.0, 2.0, 4.0] and exported.flags.writeable
    exported[0] = 9.0
    assert float(x[0]) == 0.0
    with pytest.raises(ValueError, match="needs a copy, but copy=False"):
        x.__array__(copy=False)


@pytest.mark.parametrize("call", ["inv", "matrix_power -2", "matrix_power 0", "eigvals", "pinv of nothing",
                                  "matrix_rank of nothing"])
def test_linalg_keeps_a_non_default_device(backend, call):
    """A linalg function's own arrays (an identity, the indices of eigenvalue pairs, an
    empty result) are made on its operand's device: on another device they raised
    ValueError, two devices mixed."""
    x = xp.asarray(np.array([[2.0, 1.0], [0.5, 3.0]]), device=DEVICES[1])
    empty = xp.zeros((2, 0, 3), device=DEVICES[1])
    made = {"inv": lambda: xp.linalg.inv(x), "matrix_power -2": lambda: xp.linalg.matrix_power(x, -2),
            "matrix_power 0": lambda: xp.linalg.matrix_power(x, 0), "eigvals": lambda: xp.linalg.eigvals(x),
            "pinv of nothing": lambda: xp.linalg.pinv(empty), "matrix_rank of nothing": lambda: xp.linalg.matrix_rank(empty)}
    result = made[call]()
    assert result.device == DEVICES[1]
    np.asarray(result)


@pytest.mark.parametrize("call", ["matrix_power 0", "inv", "pinv of nothing"])
def test_a_recipe_replays_its_arrays_on_their_devices(backend, call):
    """A recorded function's recipe puts what its code put on a device there again (an
    identity made on the operand's device, ``graph.placed``), and a signature holds its
    arrays' devices: a recipe kept on one device is not replayed for arrays on another.
    (A replay gave ``matrix_power(x, 0)`` of an array on ``cpu:1`` an identity on no
    device, read as the default.)"""
    from plaidarray.api import recipes
    made = {"matrix_power 0": lambda x: xp.linalg.matrix_power(x, 0), "inv": xp.linalg.inv,
            "pinv of nothing": lambda x: xp.linalg.pinv(x[:, :0])}
    values = np.array([[2.0, 1.0], [0.5, 3.0]])
    expected = made[call](np.asarray(values)) if call != "pinv of nothing" else np.zeros((0, 2))
    recipes.forget()
    for device in (HOME, DEVICES[1], HOME, DEVICES[1]):
        for _ in range(3):  # kept at the first call, replayed at the others
            result = made[call](xp.asarray(values, device=device))
            assert result.device == device
            np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-12)


def test_asking_for_the_devices_imports_no_code_generator():
    """Listing the devices (which names the GPU targets' architectures) in a fresh process
    imports neither llvmlite nor xDSL: it took 25 ms of a library's namespace check."""
    program = ("import sys, plaidarray as xp\n"
               "print(len(xp.__array_namespace_info__().devices()) >= 1, 'llvmlite' in sys.modules, 'xdsl' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False", "False"]

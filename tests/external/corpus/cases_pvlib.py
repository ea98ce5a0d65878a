"""pvlib's models of the atmosphere, irradiance, temperature, IAM, clear sky,
inverters, shading, PV arrays and systems, each at a typical operating point.

A case differentiates with respect to the leading numeric arguments (``x0`` below);
the other arguments are fixed. Functions that return a dict or a tuple give the
flattened concatenation of its values. The JAX and autograd versions swap the
case's own glue (``call``, ``_flat``) along with the package's function, so that
only the package's code decides whether they run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from harness import Case
from jax_swap import JAX, swap_func

SAPM_MODULE = {"B0": 1, "B1": -0.002438, "B2": 0.0003103, "B3": -1.246e-05, "B4": 2.112e-07,
               "B5": -1.359e-09}
SAPM_SPECTRAL = dict(SAPM_MODULE, A0=0.93, A1=0.05, A2=-0.008, A3=0.0006, A4=-1.7e-5, FD=1)
SANDIA_INVERTER = dict(Paco=250.0, Pdco=259.5, Vdco=40.2, Pso=1.77, C0=-2.48e-5, C1=-9.01e-5,
                       C2=6.69e-4, C3=-0.0189, Pnt=0.02, Vdcmax=65.0, Mppt_low=20.0,
                       Mppt_high=50.0)


def _flat(parts) -> np.ndarray:
    """The raveled parts of an output (a tuple, or a dict's values) side by side."""
    return np.hstack([np.ravel(v) for v in parts])


def _case(fn: Callable, x0: list[float], call: Callable, tag: str | None = None) -> Case:
    """The case ``call(fn, x)`` at ``x0``; its JAX or autograd version: ``call(swapped fn, x)``."""
    name = fn.__module__.replace("pvlib.", "") + "." + fn.__name__ + (f" [{tag}]" if tag else "")

    def make():
        def make_jax(backend=JAX):
            swapped = swap_func(fn, "pvlib", {}, backend)
            glue = swap_func(call, __name__, {}, backend)
            return lambda z: glue(swapped, z)
        return (lambda z: call(fn, z)), np.array(x0, float), make_jax
    return Case("pvlib", name, make)


def _atmosphere() -> list[Case]:
    from pvlib import atmosphere as atm

    return [
        _case(atm.alt2pres, [120.0, 1500.0, 3000.0], lambda fn, z: fn(z)),
        _case(atm.pres2alt, [101325.0, 90000.0, 80000.0], lambda fn, z: fn(z)),
        _case(atm.angstrom_aod_at_lambda, [0.2, 500.0, 1.2, 700.0], lambda fn, z: fn(*z)),
        _case(atm.angstrom_alpha, [0.2, 500.0, 0.15, 700.0], lambda fn, z: fn(*z)),
        _case(atm.bird_hulstrom80_aod_bb, [0.3, 0.2], lambda fn, z: fn(*z)),
        _case(atm.get_absolute_airmass, [1.5, 95000.0], lambda fn, z: fn(*z)),
        _case(atm.gueymard94_pw, [25.0, 60.0], lambda fn, z: fn(*z)),
        _case(atm.kasten96_lt, [1.5, 1.2, 0.15], lambda fn, z: fn(*z)),
        _case(atm.rh_from_tdew, [25.0, 15.0], lambda fn, z: fn(*z)),
        _case(atm.tdew_from_rh, [25.0, 55.0], lambda fn, z: fn(*z)),
        _case(atm.windspeed_powerlaw, [3.0, 10.0, 2.0],
              lambda fn, z: fn(*z, surface_type="urban")),
    ]


def _irradiance() -> list[Case]:
    from pvlib import irradiance as irr

    def decomposition(fn, z):
        return _flat(fn(z[0], z[1], 180).values())

    return [
        _case(irr.aoi, [30.0, 180.0, 40.0, 150.0], lambda fn, z: fn(*z)),
        _case(irr.aoi, [30.0, 180.0, 40.0, 150.0, 20.0, 170.0, 50.0, 210.0],
              lambda fn, z: fn(z[0:2], z[2:4], z[4:6], z[6:8]), "arrays"),
        _case(irr.aoi_projection, [30.0, 180.0, 40.0, 150.0], lambda fn, z: fn(*z)),
        _case(irr.beam_component, [30.0, 180.0, 40.0, 150.0, 800.0], lambda fn, z: fn(*z)),
        _case(irr.campbell_norman, [40.0, 0.7, 95000.0], lambda fn, z: _flat(fn(*z).values())),
        _case(irr.clearness_index, [600.0, 40.0, 1360.0], lambda fn, z: fn(*z)),
        _case(irr.clearness_index_zenith_independent, [0.6, 1.4], lambda fn, z: fn(*z)),
        _case(irr.clearsky_index, [600.0, 700.0], lambda fn, z: fn(*z)),
        _case(irr.erbs, [600.0, 40.0], decomposition),
        _case(irr.erbs_driesse, [600.0, 40.0], decomposition),
        _case(irr.orgill_hollands, [600.0, 40.0], decomposition),
        _case(irr.boland, [600.0, 40.0], decomposition),
        _case(irr.louche, [600.0, 40.0], decomposition),
        _case(irr.disc, [600.0, 40.0, 95000.0],
              lambda fn, z: _flat(fn(z[0], z[1], 180, pressure=z[2]).values())),
        _case(irr.dni, [600.0, 150.0, 40.0], lambda fn, z: fn(*z)),
        _case(irr.get_extra_radiation, [180.0], lambda fn, z: fn(z[0]), "doy scalar"),
        _case(irr.get_extra_radiation, [180.0], lambda fn, z: fn(z[0], method="asce"), "asce"),
        _case(irr.get_ground_diffuse, [30.0, 600.0, 0.25], lambda fn, z: fn(*z)),
        _case(irr.isotropic, [30.0, 150.0], lambda fn, z: fn(*z)),
        _case(irr.king, [30.0, 150.0, 600.0, 40.0], lambda fn, z: fn(*z)),
        _case(irr.klucher, [30.0, 180.0, 150.0, 600.0, 40.0, 150.0], lambda fn, z: fn(*z)),
        _case(irr.haydavies, [30.0, 180.0, 150.0, 500.0, 1360.0, 40.0, 150.0],
              lambda fn, z: fn(*z)),
        _case(irr.reindl, [30.0, 180.0, 150.0, 500.0, 600.0, 1360.0, 40.0, 150.0],
              lambda fn, z: fn(*z)),
        _case(irr.perez, [30.0, 180.0, 150.0, 500.0, 1360.0, 40.0, 150.0, 1.3],
              lambda fn, z: fn(*z)),
        _case(irr.perez_driesse, [30.0, 180.0, 150.0, 500.0, 1360.0, 40.0, 150.0, 1.3],
              lambda fn, z: fn(*z)),
        _case(irr.get_total_irradiance, [30.0, 180.0, 40.0, 150.0, 500.0, 600.0, 150.0],
              lambda fn, z: _flat(fn(*z).values())),
        _case(irr.get_total_irradiance,
              [30.0, 180.0, 40.0, 150.0, 500.0, 600.0, 150.0, 1360.0, 1.3],
              lambda fn, z: _flat(fn(*z, model="perez").values()), "perez"),
        _case(irr.poa_components, [20.0, 500.0, 150.0, 20.0], lambda fn, z: _flat(fn(*z).values())),
        _case(irr.diffuse_par_spitters, [40.0, 0.3], lambda fn, z: fn(*z)),
    ]


def _temperature() -> list[Case]:
    import pandas as pd
    from pvlib import temperature as temp

    def hourly(values):
        index = pd.date_range("2020-06-01 12:00", periods=3, freq="1h")
        return pd.Series(values, index=index)

    return [
        _case(temp.sapm_cell, [800.0, 25.0, 2.0], lambda fn, z: fn(*z, -3.47, -0.0594, 3)),
        _case(temp.sapm_module, [800.0, 25.0, 2.0], lambda fn, z: fn(*z, -3.47, -0.0594)),
        _case(temp.sapm_cell_from_module, [45.0, 800.0], lambda fn, z: fn(z[0], z[1], 3)),
        _case(temp.pvsyst_cell, [800.0, 25.0, 2.0, 29.0, 0.1], lambda fn, z: fn(*z)),
        _case(temp.faiman, [800.0, 25.0, 2.0, 25.0, 6.84], lambda fn, z: fn(*z)),
        _case(temp.faiman_rad, [800.0, 25.0, 2.0, 350.0], lambda fn, z: fn(*z)),
        _case(temp.ross, [800.0, 25.0, 45.0], lambda fn, z: fn(*z)),
        _case(temp.noct_sam, [800.0, 25.0, 2.0, 45.0, 0.2], lambda fn, z: fn(*z)),
        _case(temp.generic_linear, [800.0, 25.0, 2.0], lambda fn, z: fn(*z, 29.0, 0.0, 0.1, 0.9)),
        _case(temp.fuentes, [800.0, 810.0, 790.0, 25.0, 25.5, 26.0, 2.0, 2.0, 2.0],
              lambda fn, z: np.asarray(fn(hourly(z[0:3]), hourly(z[3:6]), hourly(z[6:9]), 45.0)),
              "pandas Series"),
    ]


def _iam_and_clearsky() -> list[Case]:
    from pvlib import clearsky, iam

    return [
        _case(iam.ashrae, [20.0, 0.05], lambda fn, z: fn(*z)),
        _case(iam.ashrae, [10.0, 30.0, 50.0, 70.0], lambda fn, z: fn(z), "array"),
        _case(iam.martin_ruiz, [20.0, 0.16], lambda fn, z: fn(*z)),
        _case(iam.martin_ruiz_diffuse, [30.0, 0.16], lambda fn, z: _flat(fn(*z))),
        _case(iam.physical, [20.0, 1.526, 4.0, 0.002], lambda fn, z: fn(*z)),
        _case(iam.physical, [10.0, 30.0, 50.0, 70.0], lambda fn, z: fn(z), "array"),
        _case(iam.schlick, [20.0, 45.0, 70.0], lambda fn, z: fn(z)),
        _case(iam.schlick_diffuse, [30.0], lambda fn, z: _flat(fn(z))),
        _case(iam.sapm, [20.0, 45.0, 70.0], lambda fn, z: fn(z, SAPM_MODULE)),
        _case(iam.interp, [20.0, 45.0, 70.0],
              lambda fn, z: fn(z, [0, 30, 60, 80, 90], [1, 0.99, 0.95, 0.7, 0]), "linear"),
        _case(clearsky.haurwitz, [20.0, 45.0, 70.0], lambda fn, z: np.asarray(fn(z)).ravel()),
        _case(clearsky.ineichen, [40.0, 1.3, 3.0], lambda fn, z: _flat(fn(*z).values())),
        _case(clearsky.simplified_solis, [50.0, 0.1, 1.0, 95000.0],
              lambda fn, z: _flat(fn(*z).values())),
        _case(clearsky.bird, [40.0, 1.3, 0.15, 0.1, 1.4], lambda fn, z: _flat(fn(*z).values())),
    ]


def _systems() -> list[Case]:
    from pvlib import inverter, pvarray, pvsystem, shading, tools

    return [
        _case(inverter.pvwatts, [200.0, 250.0], lambda fn, z: fn(*z)),
        _case(inverter.sandia, [38.0, 180.0], lambda fn, z: fn(z[0], z[1], SANDIA_INVERTER)),
        _case(shading.ground_angle, [30.0, 0.4, 0.5], lambda fn, z: fn(*z)),
        _case(shading.masking_angle, [30.0, 0.4, 0.5], lambda fn, z: fn(*z)),
        _case(shading.masking_angle_passias, [30.0, 0.4], lambda fn, z: fn(*z)),
        _case(shading.sky_diffuse_passias, [10.0], lambda fn, z: fn(*z)),
        _case(shading.projected_solar_zenith_angle, [40.0, 150.0, 5.0, 180.0],
              lambda fn, z: fn(*z)),
        _case(shading.direct_martinez, [800.0, 600.0, 0.3], lambda fn, z: fn(*z, 1, 3)),
        _case(pvarray.pvefficiency_adr, [800.0, 35.0],
              lambda fn, z: fn(*z, 1.0, -6.0, 0.02, 0.05, 0.1)),
        _case(pvarray.huld, [800.0, 35.0, 250.0], lambda fn, z: fn(*z, cell_type="csi")),
        _case(pvarray.batzelis, [800.0, 35.0],
              lambda fn, z: _flat(fn(z[0], z[1], 31.0, 8.5, 38.0, 9.0, 0.004, -0.003).values())),
        _case(pvsystem.pvwatts_dc, [800.0, 35.0, 250.0],
              lambda fn, z: fn(z[0], z[1], z[2], -0.004)),
        _case(pvsystem.sapm_effective_irradiance, [600.0, 150.0, 1.3, 20.0],
              lambda fn, z: fn(z[0], z[1], z[2], z[3], SAPM_SPECTRAL)),
        _case(pvsystem.calcparams_desoto, [800.0, 35.0],
              lambda fn, z: _flat(fn(z[0], z[1], 0.004, 1.5, 9.0, 1e-10, 0.3, 300.0, 1.12))),
        _case(pvsystem.singlediode, [9.0, 1e-9, 0.3, 300.0, 1.8],
              lambda fn, z: _flat(fn(*z, method="lambertw").values()), "lambertw"),
        _case(pvsystem.singlediode, [9.0, 1e-9, 0.3, 300.0, 1.8],
              lambda fn, z: _flat(fn(*z, method="newton").values()), "newton"),
        _case(pvsystem.i_from_v, [20.0, 9.0, 1e-9, 0.3, 300.0, 1.8],
              lambda fn, z: fn(*z, method="lambertw"), "lambertw"),
        _case(pvsystem.v_from_i, [5.0, 9.0, 1e-9, 0.3, 300.0, 1.8],
              lambda fn, z: fn(*z, method="lambertw"), "lambertw"),
        _case(tools.cosd, [10.0, 40.0], lambda fn, z: fn(z)),
        _case(tools.asind, [0.1, 0.4], lambda fn, z: fn(z)),
        _case(tools.acosd, [0.1, 0.4], lambda fn, z: fn(z)),
    ]


def cases() -> Iterator[Case]:
    yield from _atmosphere()
    yield from _irradiance()
    yield from _temperature()
    yield from _iam_and_clearsky()
    yield from _systems()

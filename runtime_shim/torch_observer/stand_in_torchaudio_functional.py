"""The observer's stand-in for ``torchaudio.functional`` (see :mod:`.stand_ins`): the filter-bank and DCT
builders, whose matrices are made on the CPU (they take no device), and ``amplitude_to_DB``, computed on its
input's device."""

from __future__ import annotations

import math

import torch

__path__: list[str] = []


def melscale_fbanks(n_freqs: int, f_min: float, f_max: float, n_mels: int, sample_rate: int,
                    norm: str | None = None, mel_scale: str = "htk") -> torch.Tensor:
    all_freqs = torch.linspace(0, sample_rate // 2, n_freqs)
    m_min, m_max = 2595.0 * math.log10(1.0 + f_min / 700.0), 2595.0 * math.log10(1.0 + f_max / 700.0)
    f_pts = 700.0 * (10 ** (torch.linspace(m_min, m_max, n_mels + 2) / 2595.0) - 1.0)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)
    down = -slopes[:, :-2] / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    return torch.max(torch.zeros(1), torch.min(down, up))


def linear_fbanks(n_freqs: int, f_min: float, f_max: float, n_filter: int, sample_rate: int) -> torch.Tensor:
    return melscale_fbanks(n_freqs, f_min, f_max, n_filter, sample_rate)


def create_dct(n_mfcc: int, n_mels: int, norm: str | None) -> torch.Tensor:
    n = torch.arange(float(n_mels))
    k = torch.arange(float(n_mfcc)).unsqueeze(1)
    dct = torch.cos(math.pi / float(n_mels) * (n + 0.5) * k)
    if norm == "ortho":
        dct[0] *= 1.0 / math.sqrt(2.0)
        dct *= math.sqrt(2.0 / float(n_mels))
    else:
        dct *= 2.0
    return dct.t()


def amplitude_to_DB(x: torch.Tensor, multiplier: float, amin: float, db_multiplier: float,  # noqa: N802
                    top_db: float | None = None) -> torch.Tensor:
    x_db = multiplier * torch.log10(torch.clamp(x, min=amin)) - multiplier * db_multiplier
    return x_db if top_db is None else torch.max(x_db, x_db.amax() - top_db)

"""The observer's stand-in for ``torchaudio.transforms`` (see :mod:`.stand_ins`): modules that register their
tensors (windows, filter banks, DCT matrices, resampling kernels) as buffers made on the CPU, as torchaudio's do,
so a transform called on a CUDA waveform before ``.to(device)`` fails as torchaudio's does ("stft input and window
must be on the same device"); the transforms that hold no tensor compute on their input's device."""

from __future__ import annotations

import math

import torch
from torch import nn
from torchaudio import functional as F  # noqa: N812 - torchaudio's own spelling

__path__: list[str] = []


class Spectrogram(nn.Module):
    def __init__(self, n_fft: int = 400, win_length: int | None = None, hop_length: int | None = None,
                 pad: int = 0, window_fn=torch.hann_window, power: float | None = 2.0, normalized: bool = False,
                 **kwargs: object) -> None:
        super().__init__()
        self.n_fft = n_fft
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        self.power = power
        self.register_buffer("window", window_fn(self.win_length))

    def forward(self, waveform: torch.Tensor) -> torch.Tensor:
        shape = waveform.size()
        flat = waveform.reshape(-1, shape[-1])
        spec = torch.stft(flat, self.n_fft, self.hop_length, self.win_length, self.window, return_complex=True)
        spec = spec.reshape(shape[:-1] + spec.shape[-2:])
        return spec if self.power is None else spec.abs().pow(self.power)


class MelScale(nn.Module):
    def __init__(self, n_mels: int = 128, sample_rate: int = 16000, f_min: float = 0.0, f_max: float | None = None,
                 n_stft: int = 201, **kwargs: object) -> None:
        super().__init__()
        fb = F.melscale_fbanks(n_stft, f_min, f_max if f_max is not None else float(sample_rate // 2), n_mels,
                               sample_rate)
        self.register_buffer("fb", fb)

    def forward(self, specgram: torch.Tensor) -> torch.Tensor:
        return torch.matmul(specgram.transpose(-1, -2), self.fb).transpose(-1, -2)


class MelSpectrogram(nn.Module):
    def __init__(self, sample_rate: int = 16000, n_fft: int = 400, win_length: int | None = None,
                 hop_length: int | None = None, f_min: float = 0.0, f_max: float | None = None, pad: int = 0,
                 n_mels: int = 128, power: float = 2.0, **kwargs: object) -> None:
        super().__init__()
        self.spectrogram = Spectrogram(n_fft, win_length, hop_length, power=power)
        self.mel_scale = MelScale(n_mels, sample_rate, f_min, f_max, n_fft // 2 + 1)

    def forward(self, waveform: torch.Tensor) -> torch.Tensor:
        return self.mel_scale(self.spectrogram(waveform))


class AmplitudeToDB(nn.Module):
    def __init__(self, stype: str = "power", top_db: float | None = None) -> None:
        super().__init__()
        self.multiplier = 10.0 if stype == "power" else 20.0
        self.top_db = top_db

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.amplitude_to_DB(x, self.multiplier, 1e-10, 0.0, self.top_db)


class MFCC(nn.Module):
    def __init__(self, sample_rate: int = 16000, n_mfcc: int = 40, dct_type: int = 2, norm: str = "ortho",
                 log_mels: bool = False, melkwargs: dict | None = None) -> None:
        super().__init__()
        self.MelSpectrogram = MelSpectrogram(sample_rate, **(melkwargs or {}))
        n_mels = (melkwargs or {}).get("n_mels", 128)
        self.register_buffer("dct_mat", F.create_dct(n_mfcc, n_mels, norm))
        self.amplitude_to_DB = AmplitudeToDB("power", 80.0)

    def forward(self, waveform: torch.Tensor) -> torch.Tensor:
        mel = self.amplitude_to_DB(self.MelSpectrogram(waveform))
        return torch.matmul(mel.transpose(-1, -2), self.dct_mat).transpose(-1, -2)


class _AxisMasking(nn.Module):
    def __init__(self, mask_param: int, axis: int) -> None:
        super().__init__()
        self.mask_param, self.axis = mask_param, axis

    def forward(self, specgram: torch.Tensor, mask_value: float = 0.0) -> torch.Tensor:
        size = specgram.size(self.axis)
        width = int(torch.randint(0, self.mask_param + 1, ()).item())
        start = int(torch.randint(0, max(1, size - width), ()).item())
        index = torch.arange(size, device=specgram.device)
        mask = (index >= start) & (index < start + width)
        shape = [1] * specgram.dim()
        shape[self.axis] = size
        return specgram.masked_fill(mask.view(shape), mask_value)


class FrequencyMasking(_AxisMasking):
    def __init__(self, freq_mask_param: int, iid_masks: bool = False) -> None:
        super().__init__(freq_mask_param, -2)


class TimeMasking(_AxisMasking):
    def __init__(self, time_mask_param: int, iid_masks: bool = False, p: float = 1.0) -> None:
        super().__init__(time_mask_param, -1)


class Resample(nn.Module):
    def __init__(self, orig_freq: int = 16000, new_freq: int = 16000, lowpass_filter_width: int = 6,
                 **kwargs: object) -> None:
        super().__init__()
        self.orig_freq, self.new_freq = orig_freq, new_freq
        gcd = math.gcd(orig_freq, new_freq)
        self.up, self.down = new_freq // gcd, orig_freq // gcd
        width = lowpass_filter_width
        taps = torch.arange(-width, width + 1, dtype=torch.float32)
        self.register_buffer("kernel", (torch.sinc(taps / 2.0) * torch.hann_window(2 * width + 1,
                                                                                     periodic=False)).view(1, 1, -1))

    def forward(self, waveform: torch.Tensor) -> torch.Tensor:
        if self.orig_freq == self.new_freq:
            return waveform
        shape = waveform.size()
        flat = waveform.reshape(-1, 1, shape[-1])
        filtered = nn.functional.conv1d(flat, self.kernel, padding=self.kernel.size(-1) // 2)
        length = int(math.ceil(self.up * shape[-1] / self.down))
        out = nn.functional.interpolate(filtered, size=length, mode="linear", align_corners=False)
        return out.reshape(shape[:-1] + (length,))

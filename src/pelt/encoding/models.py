"""Masked-LM loading and the few places where model families differ.

Everything that depends on the architecture (where the LM head's transform lives, BART's decoder,
how many positions the model has) is answered here, so that encoding, injection and evaluation
code never branches on the family.  Three families are supported, recognised by structure rather
than by name so that relatives (XLM-R, CamemBERT, ...) work too:

- ``roberta``: ``lm_head.dense -> gelu -> lm_head.layer_norm -> lm_head.decoder``;
- ``bert``: ``cls.predictions.transform -> cls.predictions.decoder``;
- ``bart``: encoder-decoder whose ``lm_head`` is applied directly to the decoder's final hidden
  state; the decoder reads the same sequence shifted right (BART's denoising setup).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from transformers import (
    AttentionInterface,
    AttentionMaskInterface,
    AutoModelForMaskedLM,
    AutoTokenizer,
    PretrainedConfig,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import sdpa_mask

from pelt.encoding.host import encode_with_offsets
from pelt.encoding.host import mention_token_span as mention_token_span  # re-exported: injection and eval use it

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Family:
    """A masked-LM layout and what it decides: how to tell it by structure, the paper's L for it
    (searched on LAMA), the vector its tables hold, the positions its embeddings leave unusable,
    and the forward from input embeddings. Every place the families differ asks this object."""

    name: str
    norm: float
    representation: str
    reserved_positions: Callable[[PretrainedConfig], int]
    has_layout: Callable[[PreTrainedModel], bool]
    head_transform: Callable[[PreTrainedModel, torch.Tensor], torch.Tensor]  # a state -> r, before the vocabulary
    encoder_decoder: bool = False  # BART: the decoder reads the sequence shifted right

    def states(
        self, model: PreTrainedModel, attention_mask: torch.Tensor | None, **inputs: torch.Tensor
    ) -> torch.Tensor:
        """Last hidden states [B, T, H], those the LM head reads (BART: the decoder's).

        ``attention_mask`` None: no row is padded (SDPA may then take its flash kernel).  A 2D mask
        goes to the encoder as the additive [B, 1, 1, T] mask transformers would build from it,
        because transformers' own construction first asks the device whether any token is padding:
        a host sync per forward that kept the GPU idle while the next batch was launched.
        """
        if self.encoder_decoder:
            if attention_mask is None:
                some = next(iter(inputs.values()))
                attention_mask = torch.ones(some.shape[:2], dtype=torch.long, device=some.device)
            return model.model(**bart_inputs(model, attention_mask, **inputs)).last_hidden_state
        return model.base_model(attention_mask=encoder_mask(model, attention_mask), **inputs).last_hidden_state


# Entities are encoded in short sentences (about 28 tokens in FewRel, at most max_seq_len): there the
# memory-efficient kernel ran a GPU's share of encoding 16 % faster than the cuDNN kernel torch
# prefers on Hopper (1.30 against 1.54 s for 89,600 sentences on an H200; benchmarks/README.md,
# run 7). A priority, not a restriction: where a kernel does not apply (a CPU, a dtype) the next runs.
SHORT_SEQUENCE_ATTENTION = [
    SDPBackend.EFFICIENT_ATTENTION,
    SDPBackend.FLASH_ATTENTION,
    SDPBackend.CUDNN_ATTENTION,
    SDPBackend.MATH,
]


def short_sequence_attention() -> contextlib.AbstractContextManager[None]:
    """SDPA's kernels in the order that suits short sentences (:data:`SHORT_SEQUENCE_ATTENTION`)."""
    return sdpa_kernel(SHORT_SEQUENCE_ATTENTION, set_priority=True)


def encoder_mask(model: PreTrainedModel, attention_mask: torch.Tensor | None) -> torch.Tensor | None:
    """A [B, T] padding mask as the additive [B, 1, 1, T] mask transformers builds from it, which it
    passes on without looking at its values (see :meth:`Family.states`)."""
    if attention_mask is None:
        return None
    dtype = model.get_input_embeddings().weight.dtype
    return (1.0 - attention_mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min


def _roberta_layout(model: PreTrainedModel) -> bool:
    head = getattr(model, "lm_head", None)
    return head is not None and hasattr(head, "dense") and hasattr(head, "layer_norm")


def _bert_layout(model: PreTrainedModel) -> bool:
    cls = getattr(model, "cls", None)
    return cls is not None and hasattr(getattr(cls, "predictions", None), "transform")


def _bart_layout(model: PreTrainedModel) -> bool:
    return model.config.is_encoder_decoder and hasattr(model, "model") and hasattr(model.model, "decoder")


def _roberta_transform(model: PreTrainedModel, states: torch.Tensor) -> torch.Tensor:
    head = model.lm_head
    return head.layer_norm(F.gelu(head.dense(states)))


FAMILIES = {
    family.name: family
    for family in (
        Family(
            "bart",
            3.0,
            "decoder final hidden state at the mask (decoder input = masked sequence shifted right)",
            lambda config: 0,
            _bart_layout,
            lambda model, states: states,  # the LM head reads the decoder's state as it is
            encoder_decoder=True,
        ),
        # RoBERTa numbers positions from pad_token_id + 1: two of its 514 rows are unusable.
        Family(
            "roberta",
            7.0,
            "lm_head.dense>gelu>lm_head.layer_norm at the mask",
            lambda config: config.pad_token_id + 1,
            _roberta_layout,
            _roberta_transform,
        ),
        Family(
            "bert",
            10.0,
            "cls.predictions.transform at the mask",
            lambda config: 0,
            _bert_layout,
            lambda model, states: model.cls.predictions.transform(states),
        ),
    )
}  # in the order they are recognised: BART first, whose encoder-decoder may also carry an lm_head

_PRECISIONS = {
    "fp32": torch.float32,
    "float32": torch.float32,
    "bf16": torch.bfloat16,
    "bfloat16": torch.bfloat16,
    "fp16": torch.float16,
    "float16": torch.float16,
}


def resolve_device(device: str = "auto") -> torch.device:
    """``auto`` picks CUDA when present so the same config runs on a laptop and on a GPU node. A
    device named outright is tried at once with an empty tensor, so that a misspelt or absent one is
    a ValueError in one line here rather than torch's assertion deep inside the first forward pass."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
        if resolved.type != "cpu":
            torch.empty(0, device=resolved)
    except (RuntimeError, AssertionError, NotImplementedError) as err:
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"device {device!r} cannot be used here ({reason}); try auto or cpu") from None
    return resolved


def resolve_dtype(precision: str, device: torch.device) -> torch.dtype:
    """``auto`` is bf16 on CUDA (fp32 range, tensor-core speed) and fp32 on CPU (bf16 is slow there)."""
    if precision == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    try:
        return _PRECISIONS[precision]
    except KeyError:
        raise ValueError(f"unknown precision {precision!r}; expected auto or one of {sorted(_PRECISIONS)}") from None


def native_bf16(device: torch.device) -> bool:
    """Whether bf16 is worth computing in on ``device``: a GPU that supports it (as torch reports,
    which counts emulation on old GPUs too: autocast there is what pelt always did on a GPU), or a
    CPU with AVX-512 BF16 or AMX (there 2.2-2.5x the fp32 speed on the demo model's shapes). On
    other CPUs torch emulates bf16, slower than fp32. Torch before 2.5 cannot say (its CPU checks are
    private and came with 2.5): there a CPU computes in fp32, the choice that is right on any CPU."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    if device.type == "cpu":
        checks = [getattr(torch.cpu, name, None) for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported")]
        return any(check() for check in checks if check is not None)
    return False


def resolve_autocast(precision: str, device: torch.device) -> bool:
    """Whether training (and the evaluation inside it) runs its forward under bf16 autocast: ``auto``
    where bf16 is native (:func:`native_bf16`), ``bf16`` always, ``fp32`` never.

    Weights and optimizer state stay fp32 either way: Adam on bf16 weights loses small updates.
    """
    if precision == "auto":
        return native_bf16(device)
    dtype = _PRECISIONS.get(precision)
    if dtype not in (torch.bfloat16, torch.float32):
        raise ValueError(f"unknown training precision {precision!r}; expected auto, bf16 or fp32")
    return dtype == torch.bfloat16


def autocast_label(autocast: bool) -> str:
    """How a training run's precision reads in logs and result files."""
    return "bf16 autocast" if autocast else "fp32"


_FP32_ATTENTION = "sdpa_fp32"


def _sdpa_in_fp32(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    **kwargs: object,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """SDPA on fp32 inputs with autocast off: the rest of the layer stays bf16."""
    with torch.autocast(query.device.type, enabled=False):
        return sdpa_attention_forward(module, query.float(), key.float(), value.float(), attention_mask, **kwargs)


AttentionInterface.register(_FP32_ATTENTION, _sdpa_in_fp32)
# Its masks are SDPA's: transformers builds none for an attention it has no mask function for, and
# padding would then be attended to.
AttentionMaskInterface.register(_FP32_ATTENTION, sdpa_mask)


def attention_for_training(model: PreTrainedModel, autocast: bool) -> None:
    """Attention in fp32 for bf16 autocast on a CPU; the SDPA transformers picks otherwise.

    On a CPU, bf16 attention costs more than it saves: SDPA's fused kernel is slower backwards in
    bf16 than in fp32 (7.0 against 2.6 ms a call on the demo model's 64 positions), and eager
    attention in bf16 rounds the attention scores, which cost the demo model its facts (it knew 56 %
    of its frequent facts instead of 86 % after the same 3,000 steps). The projections and the
    feed-forward layers, most of the work, still run in bf16. On a GPU the fused bf16 kernel wins.
    """
    if autocast and model.device.type == "cpu" and model.config._attn_implementation != _FP32_ATTENTION:
        model.set_attn_implementation(_FP32_ATTENTION)


def load_masked_lm(
    name_or_path: str, device: str = "auto", precision: str = "auto"
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Load a masked LM and its fast tokenizer, in eval mode, on ``device``.

    ``AutoModelForMaskedLM`` maps BART to ``BartForConditionalGeneration``, which is what the method
    needs (its decoder produces the mask's representation).  No ``attn_implementation`` is passed:
    transformers then picks SDPA wherever the architecture supports it and eager otherwise, instead
    of failing on architectures without SDPA.
    """
    dev = resolve_device(device)
    dtype = resolve_dtype(precision, dev)
    try:
        model = AutoModelForMaskedLM.from_pretrained(name_or_path, dtype=dtype)
        tokenizer = AutoTokenizer.from_pretrained(name_or_path)
    except (OSError, ValueError, KeyError) as err:
        raise ValueError(
            f"cannot load masked LM {name_or_path!r} (a local directory saved with save_pretrained, or a "
            f"model hub name reachable from this machine): {err}"
        ) from err
    if not tokenizer.is_fast:
        raise ValueError(f"model {name_or_path!r} has no fast tokenizer; character offsets are required")
    if tokenizer.mask_token_id is None:
        raise ValueError(f"model {name_or_path!r}: its tokenizer has no mask token")
    family(model)  # fail at load time, not mid-way through an encoding job
    model.to(dev).eval()
    logger.info(
        "loaded %s (%s, %s, attention=%s) on %s",
        name_or_path,
        model.config.model_type,
        dtype,
        getattr(model.config, "_attn_implementation", "?"),
        dev,
    )
    return model, tokenizer


def family(model: PreTrainedModel) -> Family:
    """The model's :class:`Family`, by the layout of its LM head (see the module docstring), not by
    its ``model_type``: a relative with another name (XLM-R, CamemBERT) is its family."""
    for candidate in FAMILIES.values():
        if candidate.has_layout(model):
            return candidate
    raise ValueError(f"unsupported masked LM {type(model).__name__}: expected a RoBERTa-, BERT- or BART-style LM head")


def default_norm(model: PreTrainedModel) -> float:
    """The paper's L for the model's family: what a table records, and a run injects at unless
    the config or the LAMA sweep says otherwise (:func:`pelt.eval.variants.resolve_norm`)."""
    return family(model).norm


def representation(model: PreTrainedModel) -> str:
    """A human-readable name of the vector a table holds, stored in its metadata."""
    return family(model).representation


def revision(model: PreTrainedModel) -> str:
    """The hub commit the weights came from, or ``local`` for a directory (no commit to name)."""
    return getattr(model.config, "_commit_hash", None) or "local"


def max_input_length(model: PreTrainedModel) -> int:
    """Most tokens one sequence may have, from the position-embedding table."""
    return model.config.max_position_embeddings - family(model).reserved_positions(model.config)


def _shift_right(x: torch.Tensor, first: torch.Tensor) -> torch.Tensor:
    """BART's decoder input: ``first`` then the sequence without its last element (ids or embeddings)."""
    return torch.cat([first.expand(x.shape[0], *first.shape[1:]), x[:, :-1]], dim=1)


def bart_inputs(
    model: PreTrainedModel,
    attention_mask: torch.Tensor,
    *,
    input_ids: torch.Tensor | None = None,
    inputs_embeds: torch.Tensor | None = None,
) -> dict[str, torch.Tensor]:
    """Keyword arguments of a BART forward whose decoder reads the same sequence shifted right: what
    BART does with ``input_ids``, built from ``inputs_embeds`` when given, so that injected entity
    vectors reach the decoder too. Table building, LAMA and fine-tuning all feed BART through here."""
    start = torch.tensor([[model.config.decoder_start_token_id]], device=attention_mask.device)
    if inputs_embeds is None:
        return {
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            "decoder_input_ids": _shift_right(input_ids, start),
            "decoder_attention_mask": attention_mask,
        }
    first = model.get_input_embeddings()(start)
    return {
        "inputs_embeds": inputs_embeds,
        "attention_mask": attention_mask,
        "decoder_inputs_embeds": _shift_right(inputs_embeds, first),
        "decoder_attention_mask": attention_mask,
    }


def token_states(model: PreTrainedModel, inputs_embeds: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Last hidden states [B, T, H] of the masked LM's backbone, from input embeddings.

    BART: the decoder's (:func:`bart_inputs`), so that a position's state is the one the LM head
    reads there, as in :func:`forward_mlm` and in table building.
    """
    return family(model).states(model, attention_mask, inputs_embeds=inputs_embeds)


def mask_representation(
    model: PreTrainedModel,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor | None,
    mask_positions: torch.Tensor,
) -> torch.Tensor:
    """The vector r at each row's mask position whose dot product with the word embeddings gives the logits.

    Only the backbone runs on the whole batch; the LM head's transform is applied to one position per
    row and its vocabulary projection is skipped, which is most of the head's cost.  Returns [n, H]
    in the model's dtype.
    """
    kind = family(model)
    rows = torch.arange(input_ids.shape[0], device=input_ids.device)
    return kind.head_transform(model, kind.states(model, attention_mask, input_ids=input_ids)[rows, mask_positions])


def forward_mlm(
    model: PreTrainedModel,
    inputs_embeds: torch.Tensor | None,
    attention_mask: torch.Tensor,
    input_ids: torch.Tensor | None = None,
) -> torch.Tensor:
    """Masked-LM logits [B, T, V] from input embeddings (or from ``input_ids`` when no embeddings are given).

    For BART the decoder is fed the same sequence shifted right, built from the embeddings so that
    injected entity vectors reach the decoder too; this is exactly what BART does with ``input_ids``.
    Sequences must be right-padded (what :func:`pelt.encoding.injection.inject` produces): position ids then
    agree with those computed from token ids.
    """
    if inputs_embeds is None:
        if input_ids is None:
            raise ValueError("forward_mlm needs inputs_embeds or input_ids")
        inputs_embeds = model.get_input_embeddings()(input_ids)
    if family(model).encoder_decoder:
        return model(**bart_inputs(model, attention_mask, inputs_embeds=inputs_embeds)).logits
    return model(inputs_embeds=inputs_embeds, attention_mask=attention_mask).logits


def weights_digest(model: PreTrainedModel) -> str:
    """A digest that names the model by its weights, not by where they were loaded from.

    A path says nothing once a model is copied or pulled from the hub, and a local folder has no
    commit; the weights themselves do.  sha256 over each state-dict entry in name order (name,
    shape, bytes), floating tensors rounded to bfloat16 first: an fp32 and a bf16 load of the same
    checkpoint then agree, and half the bytes are hashed (about a second for a 1.3 GB fp32 model,
    see benchmarks/README.md).  An fp16 load rounds differently and gets another digest.  Hashing
    the tensors rather than the safetensors files makes the digest independent of how the files
    were written (sharding, dtype, metadata) and works for a model that is only in memory.
    """
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        if tensor.is_floating_point():
            tensor = tensor.to(torch.bfloat16)
        digest.update(f"{name}\0{tuple(tensor.shape)}\0".encode())
        digest.update(tensor.detach().contiguous().reshape(-1).view(torch.uint8).cpu().numpy())
    return digest.hexdigest()


def model_identity(model: PreTrainedModel, name_or_path: str) -> dict[str, str]:
    """What a table records about its model: the weights digest, and the hub name and commit when
    the model came from the hub (a path that exists here is a local folder, known by digest only)."""
    identity = {"model_digest": weights_digest(model), "revision": revision(model)}
    if not os.path.exists(name_or_path):
        identity["hub_name"] = name_or_path
    return identity


def same_model_name(a: str, b: str) -> bool:
    """Whether two ``name_or_path`` strings name the same model (local paths compared after resolving)."""
    if os.path.exists(a) or os.path.exists(b):
        return os.path.realpath(a) == os.path.realpath(b)
    return a == b


def tokenize_with_offsets(tokenizer: PreTrainedTokenizerBase, texts: list[str]) -> dict[str, list]:
    """Token ids, character offsets and special-token flags of ``texts``, unpadded and untruncated.

    Building the table and injecting it must cut text into tokens identically, or a mention would
    map to different tokens in the two places; both go through here (encoding's worker processes
    through :func:`pelt.encoding.host.encode_with_offsets`, which this calls).  The fast tokenizer's
    Rust backend is called directly: transformers' own call gives the same tokens but converts each
    encoding into a dict of every field, which took half of the host's time per sentence and kept
    a GPU waiting (benchmarks/README.md, Encoding).
    """
    return encode_with_offsets(tokenizer.backend_tokenizer, texts)

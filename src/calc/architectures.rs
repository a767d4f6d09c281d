//! The model classes vLLM 0.33.0 registers, and those it has removed with the last release that
//! served them: read from the sdist's `vllm/model_executor/models/registry.py`
//! (`_TEXT_GENERATION_MODELS`, `_EMBEDDING_MODELS`, `_LATE_INTERACTION_MODELS`, `_REWARD_MODELS`,
//! `_TOKEN_CLASSIFICATION_MODELS`, `_SEQUENCE_CLASSIFICATION_MODELS`, `_MULTIMODAL_MODELS`,
//! `_SPECULATIVE_DECODING_MODELS`, `_TRANSFORMERS_SUPPORTED_MODELS`, `_TRANSFORMERS_BACKEND_MODELS`;
//! `_PREVIOUSLY_SUPPORTED_MODELS`). Generated from that file.

use super::version::VllmVersion;

/// Architectures (`architectures[0]` of a config) vLLM 0.33.0 has a model class for, one per
/// line, sorted. One text rather than a list of strings: a list carries a pointer and a length
/// per name, which the first verdict's program for a pasted config.json would carry too.
pub const SUPPORTED: &str = "\
AXK1ForCausalLM
AfmoeForCausalLM
AliceAIForCausalLM
Alpamayo2Super
ApertusForCausalLM
ArceeForCausalLM
AriaForConditionalGeneration
AudioFlamingo3ForConditionalGeneration
BagelForConditionalGeneration
BailingMoeForCausalLM
BailingMoeV25MTPModel
BailingMoeV2ForCausalLM
BailingMoeV2_5ForCausalLM
BailingMoeV3ForCausalLM
BailingMoeV3MTPModel
BailingMoeV3VLForConditionalGeneration
BeamForCausalLM
BeeForConditionalGeneration
BertForMaskedLM
BertForSequenceClassification
BertForTokenClassification
BertModel
BertSpladeSparseEmbeddingModel
BgeM3EmbeddingModel
Blip2ForConditionalGeneration
BloomForCausalLM
CLIPModel
ChatGLMForConditionalGeneration
ChatGLMModel
ClefFlashForJointSchema
ClefOmniForJointSchema
Cohere2ForCausalLM
Cohere2MoeForCausalLM
Cohere2VisionForConditionalGeneration
CohereAsrForConditionalGeneration
CohereCompassForConditionalGeneration
CohereForCausalLM
ColBERTJinaRobertaModel
ColBERTLfm2Model
ColBERTModernBertModel
ColModernVBertForRetrieval
ColPaliForRetrieval
ColQwen3
ColQwen3_5
ColUltraVBertForRetrieval
Cosmos3EdgeForConditionalGeneration
Cosmos3ForConditionalGeneration
CwmForCausalLM
D3ForSequenceClassification
DFlash2BeamDraftModel
DFlash2DraftModel
DFlashDraftModel
DFlashLagunaForCausalLM
DFlashMuseGlimmerAssistantModel
DFlashQwen3XPressModel
DSparkDraftModel
DSparkV41DraftModel
DbrxForCausalLM
DeciLMForCausalLM
DeepSeekMTPModel
DeepSeekV4MTPModel
DeepseekForCausalLM
DeepseekOCR2ForCausalLM
DeepseekOCRForCausalLM
DeepseekV2ForCausalLM
DeepseekV32ForCausalLM
DeepseekV32MTPModel
DeepseekV3BidirectionalModel
DeepseekV3ForCausalLM
DeepseekV41ForCausalLM
DeepseekV4ForCausalLM
DeepseekV4ForConditionalGeneration
DeepseekVLV2ForCausalLM
DiffusionGemmaForBlockDiffusion
DomynEdgeForCausalLM
DoryForCausalLM
Dots3NoteForCausalLM
Dots3NoteMTPModel
DotsOCRForCausalLM
Eagle2_5_VLForConditionalGeneration
Eagle3DeepseekV2ForCausalLM
Eagle3DeepseekV3ForCausalLM
Eagle3LlamaForCausalLM
Eagle3MiniMaxM2ForCausalLM
Eagle3Qwen2_5vlForCausalLM
Eagle3Qwen3ForCausalLM
Eagle3Qwen3vlForCausalLM
EagleCohereForCausalLM
EagleDeepSeekMTPModel
EagleLlama4ForCausalLM
EagleLlamaForCausalLM
EagleMiniCPMForCausalLM
EagleMistralForCausalLM
EagleMistralLarge3ForCausalLM
EmbeddingGemma2Model
Emu3ForConditionalGeneration
Ernie4_5ForCausalLM
Ernie4_5_MoeForCausalLM
Ernie4_5_VLMoeForConditionalGeneration
ErnieMTPModel
Exaone4ForCausalLM
Exaone4_5_ForConditionalGeneration
Exaone4_5_MTP
ExaoneForCausalLM
ExaoneMoEForCausalLM
ExaoneMoeForCausalLM
ExaoneMoeMTP
ExtractHiddenStatesModel
FalconForCausalLM
FalconH1ForCausalLM
FalconMambaForCausalLM
FireRedASR2ForConditionalGeneration
FlexOlmoForCausalLM
FlintForCausalLM
FunASRForConditionalGeneration
FunAudioChatForConditionalGeneration
GLM4VForCausalLM
GPT2ForSequenceClassification
GPT2LMHeadModel
GPTBigCodeForCausalLM
GPTJForCausalLM
GPTNeoXForCausalLM
Gemma2ForCausalLM
Gemma2Model
Gemma3ForCausalLM
Gemma3ForConditionalGeneration
Gemma3TextModel
Gemma3nForCausalLM
Gemma3nForConditionalGeneration
Gemma4DSparkModel
Gemma4ForCausalLM
Gemma4ForConditionalGeneration
Gemma4MTPModel
Gemma4UnifiedForConditionalGeneration
GemmaForCausalLM
Glm4ForCausalLM
Glm4MoeForCausalLM
Glm4MoeLiteForCausalLM
Glm4MoeLiteMTPModel
Glm4MoeMTPModel
Glm4vForConditionalGeneration
Glm4vMoeForConditionalGeneration
Glm5NextForCausalLM
Glm5NextForConditionalGeneration
Glm5NextMTPModel
GlmAsrForConditionalGeneration
GlmForCausalLM
GlmMoeDsaForCausalLM
GlmOcrForConditionalGeneration
GlmOcrMTPModel
GptOssForCausalLM
Granite4VisionForConditionalGeneration
GraniteForCausalLM
GraniteMoeForCausalLM
GraniteMoeHybridForCausalLM
GraniteMoeSWAForCausalLM
GraniteMoeSharedForCausalLM
GraniteSWAForCausalLM
GraniteSpeechForConditionalGeneration
GraniteSpeechPlusForConditionalGeneration
GteModel
GteNewForSequenceClassification
GteNewModel
H2OVLChatModel
HCXVisionV2ForCausalLM
HF_ColBERT
HYV3ForCausalLM
HYV3MTPModel
HYV4ForCausalLM
HYV4MTPModel
HfMoondream
HrmTextForCausalLM
HunYuanDenseV1ForCausalLM
HunYuanMoEV1ForCausalLM
HunYuanVLForConditionalGeneration
HyperCLOVAXForCausalLM
IQuestCoderForCausalLM
IQuestLoopCoderForCausalLM
Idefics3ForConditionalGeneration
InklingForCausalLM
InklingForConditionalGeneration
InklingMTPModel
InternLM2ForCausalLM
InternLM2ForRewardModel
InternLM3ForCausalLM
InternS1ForConditionalGeneration
InternS1ProForConditionalGeneration
InternS2MobiusForConditionalGeneration
InternS2MobiusMTP
InternS2PreviewForConditionalGeneration
InternVLChatModel
InternVLForConditionalGeneration
IsaacForConditionalGeneration
Jais2ForCausalLM
JambaForCausalLM
JambaForSequenceClassification
JinaEmbeddingsV5Model
JinaForRanking
JinaVLForRanking
K2HorizonForCausalLM
K3DSparkModel
KananaVForConditionalGeneration
KeyeForConditionalGeneration
KeyeVL1_5ForConditionalGeneration
KimiK25ForConditionalGeneration
KimiK3ForConditionalGeneration
KimiK3MTPModel
KimiLinearForCausalLM
KimiVLForConditionalGeneration
Kolibri1ForCausalLM
LLaMAForCausalLM
LagunaForCausalLM
Lfm2BidirectionalModel
Lfm2ForCausalLM
Lfm2MoeForCausalLM
Lfm2VlForConditionalGeneration
LiLiCorrDraftModel
LightOnOCRForConditionalGeneration
Llama4ForCausalLM
Llama4ForConditionalGeneration
LlamaBidirectionalForSequenceClassification
LlamaBidirectionalModel
LlamaForCausalLM
LlamaForCausalLMEagle3
LlamaModel
LlamaNemotronVLForSequenceClassification
LlamaNemotronVLModel
Llama_Nemotron_Nano_VL
LlavaForConditionalGeneration
LlavaNextForConditionalGeneration
LlavaNextVideoForConditionalGeneration
LlavaOnevision2ForConditionalGeneration
LlavaOnevisionForConditionalGeneration
LongCatFlashMTPModel
LongcatFlashForCausalLM
LongcatFlashNgramForCausalLM
Mamba2ForCausalLM
MambaForCausalLM
MellumForCausalLM
MiDashengLMModel
MiMoForCausalLM
MiMoMTPModel
MiMoV2FlashForCausalLM
MiMoV2ForCausalLM
MiMoV2MTPModel
MiMoV2OmniForCausalLM
MiMoV2OmniMTPModel
MiniCPM3ForCausalLM
MiniCPMForCausalLM
MiniCPMO
MiniCPMOcrForConditionalGeneration
MiniCPMV
MiniCPMV4_6ForConditionalGeneration
MiniCPMV4_7ForConditionalGeneration
MiniMaxM2ForCausalLM
MiniMaxM3MTP
MiniMaxM3SparseForCausalLM
MiniMaxM3SparseForConditionalGeneration
Ministral3ForCausalLM
Mistral3ForConditionalGeneration
MistralForCausalLM
MistralLarge3ForCausalLM
MistralModel
MixtralForCausalLM
ModernBertForSequenceClassification
ModernBertForTokenClassification
ModernBertModel
ModernVBertModel
Molmo2ForConditionalGeneration
MolmoForCausalLM
Moondream3ForCausalLM
MoonshotKimiaForCausalLM
MossAudioModel
MossTranscribeDiarizeForConditionalGeneration
MuseGlimmerAssistantModel
MuseGlimmerForCausalLM
MuseGlimmerForConditionalGeneration
MuseSparkDSparkModel
MuseSparkForConditionalGeneration
NVLM_D
NanbeigeForCausalLM
NemotronForCausalLM
NemotronHForCausalLM
NemotronHMTPModel
NemotronHPuzzleForCausalLM
NemotronH_Nano_Omni_Reasoning_V3
NemotronH_Nano_VL_V2
NemotronH_Omni_Reasoning_V3
NemotronH_Super_Omni_Reasoning_V3
NemotronParseForConditionalGeneration
NomicBertModel
OPTForCausalLM
Olmo2ForCausalLM
Olmo3ForCausalLM
OlmoForCausalLM
OlmoHybridForCausalLM
OlmoeForCausalLM
OpenAIPrivacyFilterForTokenClassification
OpenCUAForConditionalGeneration
OpenPanguMTPModel
OpenPanguVLForConditionalGeneration
OpenVLAForActionPrediction
OpsColQwen3Model
OrionForCausalLM
Ovis
Ovis2_5
Ovis2_6ForCausalLM
Ovis2_6_MoeForCausalLM
PEagleDraftModel
PaddleOCRVLForConditionalGeneration
PaliGemmaForConditionalGeneration
PanguEmbeddedForCausalLM
PanguProMoEV2ForCausalLM
PanguUltraMoEForCausalLM
Param2MoEForCausalLM
ParseAuxMTPModel
PeagleLlamaForCausalLM
PeagleQwen3ForCausalLM
Phi3ForCausalLM
Phi3VForCausalLM
Phi4ForCausalLMV
Phi4MMForCausalLM
PhiForCausalLM
PhiMoEForCausalLM
PixtralForConditionalGeneration
Plamo3ForCausalLM
QianfanOCRForConditionalGeneration
Qwen2AudioForConditionalGeneration
Qwen2ForCausalLM
Qwen2ForProcessRewardModel
Qwen2ForRewardModel
Qwen2Model
Qwen2MoeForCausalLM
Qwen2VLForConditionalGeneration
Qwen2_5OmniForConditionalGeneration
Qwen2_5OmniModel
Qwen2_5_VLForConditionalGeneration
Qwen3ASRForConditionalGeneration
Qwen3ASRForcedAlignerForTokenClassification
Qwen3ASRRealtimeGeneration
Qwen3DSparkModel
Qwen3ForCausalLM
Qwen3MoeForCausalLM
Qwen3NextForCausalLM
Qwen3NextMTP
Qwen3OmniDSparkModel
Qwen3OmniMoeForConditionalGeneration
Qwen3VLForConditionalGeneration
Qwen3VLMoeForConditionalGeneration
Qwen3VLNemotronEmbedModel
Qwen3XPressModel
Qwen3_5ForCausalLM
Qwen3_5ForConditionalGeneration
Qwen3_5MTP
Qwen3_5MoeForCausalLM
Qwen3_5MoeForConditionalGeneration
Qwen3_5MoeMTP
Qwen4ExpForCausalLM
Qwen4ExpForConditionalGeneration
Qwen4ExpMTP
RForConditionalGeneration
RadioMBartPrefixForCausalLM
Rnj1ForCausalLM
RobertaForMaskedLM
RobertaForSequenceClassification
RobertaForTokenClassification
RobertaModel
SarvamMLAForCausalLM
SarvamMoEForCausalLM
SeedOssForCausalLM
SiglipModel
SkyworkR1VChatModel
SmolLM3ForCausalLM
SmolVLMForConditionalGeneration
SolarForCausalLM
StableLmForCausalLM
Starcoder2ForCausalLM
Step1ForCausalLM
Step3TextForCausalLM
Step3VLForConditionalGeneration
Step3p5ForCausalLM
Step3p5MTP
Step3p7ForConditionalGeneration
Step5ForCausalLM
Step5ForConditionalGeneration
Step5MTP
StepVLForConditionalGeneration
TeleChat2ForCausalLM
TeleChat3ForCausalLM
TeleFLMForCausalLM
Terratorch
TransformersEmbeddingModel
TransformersForCausalLM
TransformersForMTP
TransformersForSequenceClassification
TransformersMoEEmbeddingModel
TransformersMoEForCausalLM
TransformersMoEForMTP
TransformersMoEForSequenceClassification
TransformersMultiModalEmbeddingModel
TransformersMultiModalForCausalLM
TransformersMultiModalForSequenceClassification
TransformersMultiModalMoEForCausalLM
UltravoxModel
UnlimitedOCRForCausalLM
VaultGemmaForCausalLM
VibeVoiceAsrForConditionalGeneration
VoxtralForConditionalGeneration
VoxtralRealtimeGeneration
VoyageQwen3BidirectionalEmbedModel
WhisperForConditionalGeneration
XLMRobertaForSequenceClassification
XLMRobertaForTokenClassification
XLMRobertaModel
Zamba2ForCausalLM";

/// Architectures vLLM removed, with the last release that served them (`_PREVIOUSLY_SUPPORTED_
/// MODELS`, which vLLM words "was supported in vLLM until v0.10.2": 0.10.2's registry still
/// has `MllamaForConditionalGeneration`, 0.11.0 lists it here): one per line, sorted, the
/// name and the release apart by a space.
pub const REMOVED: &str = "\
AquilaForCausalLM 0.24.0
AquilaModel 0.24.0
ArcticForCausalLM 0.28.0
AyaVisionForConditionalGeneration 0.24.0
BaiChuanForCausalLM 0.23.0
BaichuanForCausalLM 0.23.0
BambaForCausalLM 0.23.0
ChameleonForConditionalGeneration 0.28.0
Cheers 0.28.0
CheersForConditionalGeneration 0.28.0
DonutForConditionalGeneration 0.10.2
Dots1ForCausalLM 0.23.0
ErnieForSequenceClassification 0.23.0
ErnieForTokenClassification 0.23.0
ErnieModel 0.23.0
Fairseq2LlamaForCausalLM 0.28.0
FireRedLIDForConditionalGeneration 0.28.0
FuyuForCausalLM 0.25.0
GritLM 0.28.0
Grok1ForCausalLM 0.24.0
Grok1ModelForCausalLM 0.24.0
HCXVisionForCausalLM 0.28.0
InternLM2VEForCausalLM 0.23.0
InternLMForCausalLM 0.23.0
JAISLMHeadModel 0.22.0
MPTForCausalLM 0.28.0
MantisForConditionalGeneration 0.24.0
MiniMaxForCausalLM 0.23.0
MiniMaxM1ForCausalLM 0.23.0
MiniMaxText01ForCausalLM 0.23.0
MiniMaxVL01ForConditionalGeneration 0.23.0
MllamaForConditionalGeneration 0.10.2
MotifForCausalLM 0.10.2
MptForCausalLM 0.28.0
MusicFlamingoForConditionalGeneration 0.24.0
OuroForCausalLM 0.26.0
PersimmonForCausalLM 0.25.0
Phi3SmallForCausalLM 0.9.2
Phi4FlashForCausalLM 0.10.2
Phi4MultimodalForCausalLM 0.12.0
Plamo2ForCausalLM 0.26.0
PrithviGeoSpatialMAE 0.28.0
QWenLMHeadModel 0.23.0
QwenVLForConditionalGeneration 0.23.0
RWForCausalLM 0.28.0
StableLMEpochForCausalLM 0.28.0
Tarsier2ForConditionalGeneration 0.23.0
TarsierForConditionalGeneration 0.24.0
TeleChatForCausalLM 0.25.0
XverseForCausalLM 0.23.0";

/// What vLLM 0.33.0 does with a config's architecture, when that is not simply "serves it":
/// removed (and until when it was served), or unknown to its registry.
///
/// ```
/// use headroom::calc::architectures::note;
/// assert_eq!(note("LlamaForCausalLM"), None);
/// assert!(note("MiniMaxM1ForCausalLM").unwrap().contains("until 0.23.0 and has removed its model class"));
/// assert!(note("FooBarForCausalLM").unwrap().contains("no model class"));
/// assert_eq!(note(""), None);
/// ```
pub fn note(architecture: &str) -> Option<String> {
    note_and_short(architecture, VllmVersion::CURRENT).map(|(n, _)| n)
}

/// The line of a sorted text (one entry per line) whose first word is `name`, by a binary
/// search over the text's lines, split once (every plan looks up its architecture, a sweep
/// once per point).
fn find_line(
    index: &'static std::sync::OnceLock<Vec<&'static str>>,
    text: &'static str,
    name: &str,
) -> Option<&'static str> {
    let lines = index.get_or_init(|| text.lines().collect());
    let word = |l: &&'static str| l.split(' ').next().unwrap_or(l);
    lines
        .binary_search_by(|l| word(l).cmp(name))
        .ok()
        .map(|i| lines[i])
}

static SUPPORTED_LINES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
static REMOVED_LINES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();

/// Whether vLLM 0.33.0 registers a model class for an architecture.
pub fn supported(architecture: &str) -> bool {
    find_line(&SUPPORTED_LINES, SUPPORTED, architecture).is_some()
}

/// The last release that served a removed architecture, as its text ("0.23.0").
fn served_until_text(architecture: &str) -> Option<&'static str> {
    find_line(&REMOVED_LINES, REMOVED, architecture)?
        .split_once(' ')
        .map(|(_, v)| v)
}

/// The last release that served a removed architecture. Read as its three numbers, not by
/// [`VllmVersion::parse`], which refuses releases Headroom does not plan (0.9.2 is one); every
/// entry's patch is the one Headroom plans its series under (0.10.2, else 0).
pub fn served_until(architecture: &str) -> Option<VllmVersion> {
    served_until_text(architecture).and_then(release)
}

/// A release as [`REMOVED`] writes it ("0.23.0").
fn release(text: &str) -> Option<VllmVersion> {
    let mut parts = text.split('.').map(|p| p.parse::<u32>().ok());
    Some(VllmVersion {
        major: parts.next()??,
        minor: parts.next()??,
        patch: parts.next()??,
    })
}

/// [`note`] for a plan under `version`, with the short form the verdict opens with: nothing
/// where that release still served a removed architecture (that release or an older one). The
/// first verdict's programs show only the short form: the note is the empty text there
/// (`planner::page_text`).
pub fn note_and_short(architecture: &str, version: VllmVersion) -> Option<(String, String)> {
    if architecture.is_empty() || supported(architecture) {
        return None;
    }
    let until = served_until_text(architecture);
    if until.and_then(release).is_some_and(|last| version <= last) {
        return None;
    }
    let quoted = crate::calc::quoted(architecture);
    // Either way vLLM 0.33.0 first tries its Transformers backend (ModelRegistry.inspect_model_cls
    // with model_impl auto), then raises (`_raise_for_unsupported`).
    if let Some(until) = until {
        return Some((
            super::planner::page_text(|| {
                format!(
                "vLLM served {quoted} until {until} and has removed its model class: vLLM 0.33.0 would try its Transformers modeling backend, which serves only a model transformers itself can build (a custom class with trust_remote_code), and otherwise stops with \"Model architecture {architecture} was supported in vLLM until v{until}, and is not supported anymore.\" Release {until} and those before it serve it. Headroom plans the shape the config describes."
            )
            }),
            format!("vLLM 0.33.0 no longer serves {quoted} (served until {until}): only its Transformers backend might."),
        ));
    }
    Some((
        super::planner::page_text(|| format!(
            "vLLM 0.33.0 has no model class for the config's architecture {quoted}: it would try its Transformers modeling backend, which serves only a model transformers itself can build (a custom class with trust_remote_code), and otherwise stops with \"Model architectures ['{architecture}'] are not supported for now.\" Headroom plans the shape the config describes, as a standard decoder where it knows no better."
        )),
        format!("vLLM 0.33.0 has no model class for {quoted}: only its Transformers backend might serve it."),
    ))
}

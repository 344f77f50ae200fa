"""The OpenAI-compatible provider: Chat Completions streaming behind the same `Model` seam
as the Anthropic provider, for vLLM, llama.cpp, Ollama, LM Studio, SGLang, OpenRouter,
LiteLLM, OpenAI itself, DeepSeek, DashScope, Moonshot, Zhipu, Groq, Together and
Fireworks.

    request.py    ModelRequest (Anthropic-shaped) → a Chat Completions body, per preset
    schema.py     tool parameter schemas in the dialect a server accepts
    presets.py    what each server family accepts (`Compat`), overridable in settings
    normalise.py  any server's chunks → the Anthropic stream events the engine folds
    errors.py     every error body shape → ModelAPIError, with retry waits
    provider.py   the HTTP side: POST {base}/chat/completions, SSE, retries classified

Nothing here is imported on the Anthropic path: `wisp.models.route` loads it the first
time a model spec names an OpenAI-compatible provider.
"""

"""Built-in models: Hugging Face encoders (``hf/``, with their attention modes in
``decompose/``), the native PE zoo (``zoo/``) and its masked-LM pretraining (``pretrain/``)."""

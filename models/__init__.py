"""Built-in model adapters: Hugging Face encoders (and, later, the native PE zoo)."""

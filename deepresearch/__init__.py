"""deepresearch internals. The top-level modules (agent, workflow, tools, ...) are the front doors."""

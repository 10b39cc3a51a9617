"""Reading the question: its topic and sub-questions (planning), what it asks (asked), its verbs and word
classes (verbclues, wordclasses), its noun phrases (phrases) and comparisons (comparison)."""

"""Reading a page: its passages (text), the sentences worth quoting (sentences), what leans on an unseen
antecedent (leaning) and what a page or a section is (pages)."""

// Applies the saved colour theme before the first paint (a classic script: modules run too late).
(function () {
  try {
    var theme = localStorage.getItem("deepresearch.theme");
    if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
  } catch (e) {
    /* storage unavailable: follow the system */
  }
})();

// Light, dark or the system's choice; remembered in localStorage (theme-init.js applies it before paint).

const KEY = "deepresearch.theme";
/** after "auto" comes the scheme the system is not in, so the first click always changes what is seen */
function next(choice) {
  const systemDark = matchMedia("(prefers-color-scheme: dark)").matches;
  const system = systemDark ? "dark" : "light";
  const other = systemDark ? "light" : "dark";
  return { auto: other, [other]: system, [system]: "auto" }[choice];
}
const LABEL = { auto: "automatic (follows the system)", light: "light", dark: "dark" };

function stored() {
  try {
    const value = localStorage.getItem(KEY);
    return value === "light" || value === "dark" ? value : "auto";
  } catch {
    return "auto";
  }
}

/** @param {HTMLButtonElement} button */
export function setupTheme(button) {
  const apply = (choice) => {
    if (choice === "auto") delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = choice;
    button.dataset.choice = choice;
    button.setAttribute("aria-label", `Colour theme: ${LABEL[choice]}. Change`);
    button.title = `Theme: ${LABEL[choice]}`;
  };
  apply(stored());
  button.addEventListener("click", () => {
    const choice = next(stored());
    try {
      if (choice === "auto") localStorage.removeItem(KEY);
      else localStorage.setItem(KEY, choice);
    } catch {
      /* not remembered, still applied */
    }
    apply(choice);
  });
}

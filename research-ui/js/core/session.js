// Who the workbench acts as (GET /api/session), and the sign-in dialog a server that requires API tokens
// gets. The token the user pastes goes to the server once, in a JSON body; the server answers with a session
// in an HttpOnly cookie (a random id, not the token), so the token is never in a URL, in
// localStorage/sessionStorage, in a cookie or readable by any script.

import { api, setUnauthorisedHandler } from "./api.js";
import { $, setText } from "./dom.js";

/**
 * @typedef {{user: string, admin: boolean, token_required: boolean, collections: string[]}} Session
 * @typedef {{onSignedIn: (session: Session) => void, onSignedOut: (how: {deliberate: boolean}) => void,
 *   onUnavailable: (message: string) => void}} SessionHooks
 */

export class SessionGate {
  /** @param {SessionHooks} hooks */
  constructor(hooks) {
    this.hooks = hooks;
    /** @type {Session|null} */
    this.session = null;
    this.dialog = /** @type {HTMLDialogElement} */ ($("signin"));
    this.input = /** @type {HTMLInputElement} */ ($("signin-token"));
    this.button = /** @type {HTMLButtonElement} */ ($("signin-button"));
    this.error = $("signin-error");
    this.reason = $("signin-reason");
    // the rest of the workbench is of no use without a session: Escape does not dismiss the dialog
    this.dialog.addEventListener("cancel", (event) => event.preventDefault());
    $("signin-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    $("sign-out").addEventListener("click", () => this.signOut());
    setUnauthorisedHandler((error) => this.lost(error.message));
  }

  /**
   * Ask the server who we are: signed in (or no token needed) → onSignedIn; a token is needed → the dialog.
   * @returns {Promise<void>}
   */
  async check() {
    try {
      this.signedIn(await api.session());
    } catch (error) {
      if (error.status === 401) this.ask("");
      else this.hooks.onUnavailable(`Could not ask the server who you are: ${error.message}`);
    }
  }

  /** A call was refused with 401 after sign-in (the token was revoked): ask again, keep everything else. */
  lost(message) {
    if (this.dialog.open) return;
    this.session = null;
    this.hooks.onSignedOut({ deliberate: false });
    const why = message.replace(/\.$/, "");
    this.ask(`The server no longer accepts your token (${why}). Sign in again; what you typed is kept.`);
  }

  /** @param {string} reason why the dialog is back ("" the first time) */
  ask(reason) {
    this.renderAccount();
    setText(this.reason, reason);
    this.reason.hidden = !reason;
    this.showError("");
    if (!this.dialog.open) this.dialog.showModal();
    this.input.focus();
  }

  async submit() {
    const token = this.input.value.trim();
    if (!token) {
      this.showError("Paste the token first.");
      this.input.focus();
      return;
    }
    this.button.disabled = true;
    setText(this.button, "Signing in…");
    try {
      const session = await api.signIn(token);
      this.input.value = "";
      this.dialog.close();
      this.signedIn(session);
    } catch (error) {
      this.showError(
        error.status === 401 || error.status === 422
          ? `The server did not accept this token: ${error.message}.`
          : `Could not sign in: ${error.message}`,
      );
      this.input.select();
    } finally {
      this.button.disabled = false;
      setText(this.button, "Sign in");
    }
  }

  async signOut() {
    const button = /** @type {HTMLButtonElement} */ ($("sign-out"));
    button.disabled = true;
    try {
      await api.signOut();
    } catch (error) {
      // the cookie is still there: staying signed in is the honest state
      button.title = `Could not sign out: ${error.message}`;
      return;
    } finally {
      button.disabled = false;
    }
    button.title = "";
    this.session = null;
    this.hooks.onSignedOut({ deliberate: true });
    this.ask("");
  }

  /** @param {Session} session */
  signedIn(session) {
    this.session = session;
    this.renderAccount();
    this.hooks.onSignedIn(session);
  }

  /** The signed-in user, only on a server that requires tokens (elsewhere everyone is the local owner). */
  renderAccount() {
    const session = this.session;
    $("account").hidden = !session?.token_required;
    setText($("account-user"), session?.token_required ? session.user : "");
    $("account-user").title = session?.token_required
      ? `Signed in as ${session.user}${session.admin ? "; an admin sees every user's runs" : ""}`
      : "";
    $("account-admin").hidden = !session?.admin;
  }

  showError(message) {
    setText(this.error, message);
    this.error.hidden = !message;
  }
}

interface Props {
  notice: string | undefined;
  busy: boolean;
  onSignIn(): void;
}

/** The first screen: one way in, through core's marketplace handoff. */
export function SignIn({ notice, busy, onSignIn }: Props) {
  return (
    <main class="sign-in" id="main">
      <h1>Repository chat</h1>
      <p>Chat for your repositories: the repository room, branch rooms and your mentions.</p>
      {notice ? (
        <p class="notice" role="alert">
          {notice}
        </p>
      ) : null}
      <button type="button" class="primary" onClick={onSignIn} disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in with core'}
      </button>
      <p class="fine-print">You are sent to core to approve this viewer; your core password and session never reach it.</p>
    </main>
  );
}

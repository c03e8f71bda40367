// The signed-in user's claims from Keyfob's ID token, or a button that signs in through Keyfob's hosted login.
import { auth, signIn, signOut } from "../auth";

export default async function Home() {
  const session = await auth();
  return (
    <main>
      <h1>Keyfob with Auth.js</h1>
      {session ? (
        <>
          <pre>{JSON.stringify(session.user, null, 2)}</pre>
          <form
            action={async () => {
              "use server";
              await signOut();
            }}
          >
            <button type="submit">Sign out</button>
          </form>
        </>
      ) : (
        <form
          action={async () => {
            "use server";
            await signIn("keyfob");
          }}
        >
          <button type="submit">Sign in with Keyfob</button>
        </form>
      )}
    </main>
  );
}

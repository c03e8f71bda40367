/** Keyfob's front page: where a newcomer goes next (the dashboard, their account, the docs) and what applications read. */

const link = "text-indigo-700 underline dark:text-indigo-300";

const START = [
  { href: "/admin", label: "Dashboard", text: "for admins: clients, redirect URIs, signers, keys, accounts and the audit log" },
  { href: "/account", label: "Your account", text: "sign in with a wallet, a passkey, Google or Apple; your sessions and ways to sign in" },
];

const FOR_APPLICATIONS = [
  { href: "/.well-known/openid-configuration", label: "/.well-known/openid-configuration", text: "OpenID Connect discovery" },
  { href: "/keys", label: "/keys", text: "the public keys that verify Keyfob's tokens" },
  { href: "/api/admin/v1/openapi.json", label: "/api/admin/v1/openapi.json", text: "the management API (OpenAPI 3.1)" },
];

export default function Home() {
  return (
    <main className="min-h-dvh bg-slate-50 text-slate-900 [color-scheme:light] dark:bg-slate-950 dark:text-slate-100 dark:[color-scheme:dark]">
      <div className="mx-auto max-w-2xl px-6 py-16">
        <h1 className="text-3xl font-semibold tracking-tight">Keyfob</h1>
        <p className="mt-4 text-slate-600 dark:text-slate-300">
          The authorization server of the vehicle-data platform. Applications obtain access and identity tokens by signing an EIP-4361
          challenge with a key of their developer license, or by sending their users to Keyfob&apos;s hosted login.
        </p>

        <h2 className="mt-10 text-lg font-semibold">Get started</h2>
        <ul className="mt-3 space-y-2">
          {START.map((item) => (
            <li key={item.href}>
              <a className={`${link} font-medium`} href={item.href}>
                {item.label}
              </a>
              <span className="text-slate-600 dark:text-slate-300">: {item.text}</span>
            </li>
          ))}
        </ul>
        <p className="mt-4 text-sm text-slate-600 dark:text-slate-300">
          The first admin is named on the server: <code className="font-mono">npm run keyfob -- admins grant &lt;address&gt;</code>, then
          sign in to the dashboard with that wallet.
        </p>

        <h2 className="mt-10 text-lg font-semibold">Documentation</h2>
        <p className="mt-3 text-slate-600 dark:text-slate-300">
          In Keyfob&apos;s repository: <code className="font-mono text-sm">README.md</code> (start, first token),{" "}
          <code className="font-mono text-sm">docs/quickstart.md</code> (sign users in with openid-client or Auth.js) and{" "}
          <code className="font-mono text-sm">docs/endpoints.md</code> (every endpoint). Machine-readable, from this server:
        </p>
        <ul className="mt-3 space-y-2 text-sm">
          {FOR_APPLICATIONS.map((item) => (
            <li key={item.href}>
              <a className={`${link} font-mono`} href={item.href}>
                {item.label}
              </a>
              <span className="text-slate-600 dark:text-slate-300">: {item.text}</span>
            </li>
          ))}
        </ul>
      </div>
    </main>
  );
}

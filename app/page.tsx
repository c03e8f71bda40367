export default function Home() {
  return (
    <main className="min-h-dvh bg-slate-50 text-slate-900 [color-scheme:light] dark:bg-slate-950 dark:text-slate-100 dark:[color-scheme:dark]">
      <div className="mx-auto max-w-2xl px-6 py-16">
        <h1 className="text-3xl font-semibold tracking-tight">Keyfob</h1>
        <p className="mt-4 text-slate-600 dark:text-slate-300">
          The authorization server of the vehicle-data platform. Applications obtain access and identity tokens by signing an EIP-4361
          challenge with a key of their developer license.
        </p>
        <ul className="mt-8 space-y-2 font-mono text-sm">
          <li>
            <a className="text-indigo-700 underline dark:text-indigo-300" href="/.well-known/openid-configuration">
              /.well-known/openid-configuration
            </a>
          </li>
          <li>
            <a className="text-indigo-700 underline dark:text-indigo-300" href="/keys">
              /keys
            </a>
          </li>
        </ul>
      </div>
    </main>
  );
}

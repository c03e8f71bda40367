export default function Home() {
  return (
    <main className="mx-auto max-w-2xl px-6 py-16">
      <h1 className="text-3xl font-semibold tracking-tight">Keyfob</h1>
      <p className="mt-4 text-slate-600">
        The authorization server of the vehicle-data platform. Applications obtain access and identity tokens
        by signing an EIP-4361 challenge with a key of their developer license.
      </p>
      <ul className="mt-8 space-y-2 font-mono text-sm">
        <li>
          <a className="text-indigo-700 underline" href="/.well-known/openid-configuration">/.well-known/openid-configuration</a>
        </li>
        <li>
          <a className="text-indigo-700 underline" href="/keys">/keys</a>
        </li>
      </ul>
    </main>
  );
}

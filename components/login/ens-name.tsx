/**
 * A wallet's ENS primary name, with its avatar when there is one, as a wallet login kept them
 * (lib/ens/profiles.ts); the whole address in its title. Shown beside the address, never instead
 * of it where the address is what the person checks.
 */
import type { EnsProfileRow } from "@/lib/store/contract";
import { isHttpsUrl } from "./https-url";

/** A kept profile with a name: what there is to show. */
export type EnsNamed = EnsProfileRow & { name: string };

export const hasEnsName = (profile: EnsProfileRow | undefined): profile is EnsNamed => Boolean(profile?.name);

export function EnsName({ address, profile }: { address: string; profile: EnsNamed }) {
  return (
    <span className="inline-flex min-w-0 items-center gap-2 align-middle" title={address} data-testid="ens-name">
      <EnsAvatar avatar={profile.avatar} />
      <span className="truncate font-medium">{profile.name}</span>
    </span>
  );
}

/** The avatar at 20 px, only from an https URL; nothing otherwise. */
export function EnsAvatar({ avatar }: { avatar: string | null }) {
  if (!isHttpsUrl(avatar)) return null;
  return (
    // biome-ignore lint/performance/noImgElement: an ENS avatar's https URL, any host: not for next/image
    <img
      src={avatar}
      alt=""
      width={20}
      height={20}
      referrerPolicy="no-referrer"
      decoding="async"
      data-testid="ens-avatar"
      className="size-5 shrink-0 rounded-full bg-white object-cover ring-1 ring-slate-200 dark:ring-slate-700"
    />
  );
}

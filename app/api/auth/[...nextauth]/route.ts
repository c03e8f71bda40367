import { handlers } from "@/app/_upstream/auth";

export const dynamic = "force-dynamic";

export const { GET, POST } = handlers;

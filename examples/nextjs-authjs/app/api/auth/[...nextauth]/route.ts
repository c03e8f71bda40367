// Auth.js's sign-in, callback, session and sign-out endpoints under /api/auth.
import { handlers } from "../../../../auth";

export const { GET, POST } = handlers;

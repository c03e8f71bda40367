import type { Metadata } from "next";
import type { ReactNode } from "react";
import { documentLanguage } from "./_lib/document-language";
import "./globals.css";

export const metadata: Metadata = {
  title: "Keyfob",
  description: "Authorization server for wallet-based and social login",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang={await documentLanguage()}>
      <body className="min-h-screen bg-slate-50 text-slate-900 antialiased">{children}</body>
    </html>
  );
}

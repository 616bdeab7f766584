import type { Metadata } from "next";
import { connection } from "next/server";
import type { ReactNode } from "react";
import { AdminStatus } from "@/components/AdminStatus";
import { bengaliFont } from "@/components/fonts/bengali";
import { Nav } from "@/components/Nav";
import { Providers } from "@/components/Providers";
import "./globals.css";

export const metadata: Metadata = {
  title: "wirewatch",
  description: "Real-time news ingestion with an observability-first ops dashboard",
};

// Every page renders per request: its scripts carry the nonce of that response's
// Content-Security-Policy (proxy.ts, docs/decisions/009), which a page built ahead cannot know.
export default async function RootLayout({ children }: { children: ReactNode }) {
  await connection();
  return (
    <html lang="en" className={bengaliFont.variable}>
      <body>
        <Providers>
          <header className="site-header">
            <div className="site-header-inner">
              <span className="brand">wirewatch</span>
              <Nav />
              <AdminStatus />
            </div>
          </header>
          {children}
        </Providers>
      </body>
    </html>
  );
}

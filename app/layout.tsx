import type { Metadata } from "next";
import type { ReactNode } from "react";
import { Nav } from "@/components/Nav";
import { Providers } from "@/components/Providers";
import "./globals.css";

export const metadata: Metadata = {
  title: "wirewatch",
  description: "Real-time news ingestion with an observability-first ops dashboard",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <header className="site-header">
          <div className="site-header-inner">
            <span className="brand">wirewatch</span>
            <Nav />
          </div>
        </header>
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}

import localFont from "next/font/local";

/**
 * Noto Sans Bengali, shipped with the app (@fontsource/noto-sans-bengali 5.3.0, its Bengali
 * subset only: 44 KB a weight as woff2), so Bangla headlines render on a machine with no Bengali
 * font of its own; headless Chromium on Debian has none and drew every Bangla letter as a box.
 *
 * Local, never next/font/google: the build has no internet. The unicode-range is fontsource's
 * for this subset, so the browser uses (and downloads) the face only for Bengali characters and
 * Latin text keeps the system font it had. `adjustFontFallback: false`: next/font's generated
 * metric-adjusted Arial has no unicode-range, and would have taken over the Latin text.
 * Two weights: 400 for text, 700 for the bold headings and badges (600 is synthesised close enough).
 */
export const bengaliFont = localFont({
  src: [
    {
      path: "../../node_modules/@fontsource/noto-sans-bengali/files/noto-sans-bengali-bengali-400-normal.woff2",
      weight: "400",
      style: "normal",
    },
    {
      path: "../../node_modules/@fontsource/noto-sans-bengali/files/noto-sans-bengali-bengali-700-normal.woff2",
      weight: "700",
      style: "normal",
    },
  ],
  declarations: [
    {
      prop: "unicode-range",
      value:
        "U+0951-0952, U+0964-0965, U+0980-09FE, U+1CD0, U+1CD2, U+1CD5-1CD6, U+1CD8, U+1CE1, U+1CEA, U+1CED, U+1CF2, U+1CF5-1CF7, U+200C-200D, U+20B9, U+25CC, U+A8F1",
    },
  ],
  display: "swap",
  // Most pages show no Bangla until news arrives: no preload, fetched when a Bengali character
  // is first drawn.
  preload: false,
  adjustFontFallback: false,
  variable: "--font-bengali",
});

// SVG to PNG through resvg (@resvg/resvg-js: Rust's resvg with prebuilt binaries from npm), for
// the places that need a raster image (the README's demo plot). Text uses the system's fonts.
import { Resvg } from '@resvg/resvg-js';

/** Rasterises `svg` at its own size times `scale`. */
export function svgToPng(svg: string, scale = 1): Uint8Array {
  const image = new Resvg(svg, { fitTo: scale === 1 ? { mode: 'original' } : { mode: 'zoom', value: scale }, font: { loadSystemFonts: true } }).render();
  return new Uint8Array(image.asPng());
}

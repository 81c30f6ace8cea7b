// Debian's Chromium through playwright-core, with the flags that give it WebGPU on SwiftShader here.
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * `extraArgs`: more flags (benchmarks compare raster modes: '--disable-gpu-rasterization').
 * `webgpu: false` launches Chromium as it runs here without the flags: no WebGPU adapter (the map
 * draws on Canvas 2D) and, with no GPU, software compositing.
 */
export function launch(extraArgs: readonly string[] = [], { webgpu = true }: { webgpu?: boolean } = {}): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    // Headed under Xvfb (scripts/test.mjs) so that WebGPU canvases draw; headless when asked.
    headless: process.env.HEADLESS === '1',
    args: [
      '--no-sandbox',
      // WebGPU on SwiftShader, with compositing on SwiftShader's Vulkan too: a WebGPU canvas does
      // not show under software compositing.
      ...(webgpu ? ['--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-vulkan=swiftshader', '--use-webgpu-adapter=swiftshader', '--disable-vulkan-surface'] : []),
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      ...extraArgs,
    ],
  });
}

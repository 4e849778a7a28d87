import { defineConfig } from "vite";

// The built page (dist/) is served by the gateway's web port (--web-root); `npm run dev` serves
// it on :5173 and calls the gateway named by VITE_GATEWAY_URL (default http://127.0.0.1:8054,
// which allows this origin under mahjong run).
export default defineConfig({
  build: { outDir: "dist", emptyOutDir: true, target: "es2022" },
  server: { host: "127.0.0.1", port: 5173, strictPort: true },
});

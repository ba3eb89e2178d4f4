import { defineConfig } from "vite";
import { pageConfig } from "../shared/vite.js";

export default defineConfig(pageConfig(new URL(".", import.meta.url)));

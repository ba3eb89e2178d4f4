/** The Sandbox middleware's name in the chain (the light plugin entry places it without loading the middleware). */
export const SANDBOX_MIDDLEWARE_NAME = "Sandbox";

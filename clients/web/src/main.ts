// The reference web client's entry point (placeholder: the shell lands with issue #20).
import { VERSION } from "souk-client";

const app = document.getElementById("app");
if (app) app.textContent = `Souk ${VERSION}`;

// canUseTool rewrites the Write the model asked for; the file must hold the host's text.
import { baseOptions, run } from "./common.mjs";

const calls = [];
const options = {
  ...baseOptions(),
  canUseTool: async (toolName, input, { toolUseID, suggestions, blockedPath }) => {
    calls.push({ toolName, input, toolUseID, suggestions, blockedPath });
    return { behavior: "allow", updatedInput: { ...input, content: "FROM THE TS HOST\n" } };
  },
};
await run("write the file", options, () => ({ calls }));

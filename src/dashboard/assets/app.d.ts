// app.js is browser code imported `with { type: "text" }`: on the server side it is its source text.
declare const source: string;
export default source;

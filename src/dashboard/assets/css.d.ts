// Stylesheets are imported `with { type: "text" }`: the import is the stylesheet's text.
declare module "*.css" {
  const text: string;
  export default text;
}

"""`workbench view`: a local web app over runs and trials (summary: what is read, pages: the HTML, server: routes)."""

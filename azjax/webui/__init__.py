"""Static files of the local play page (`azjax.web`): index.html, app.js and style.css."""

"""Static files of the local play page (`azjax.play.web`): index.html, app.js and style.css."""

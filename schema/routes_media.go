package schema

// mediaRoutes declares the CMS routes of media (attachments, WordPress's attachments
// controller). Anonymous reads of public media are answered by edges from the replica (the
// origin answers credentialed ones with the same read engine); uploads, updates, deletions,
// post-processing and edits are answered by the origin (origin/media), which checks WordPress's
// capabilities itself. None is batch-capable: WordPress does not batch attachments. The
// post-process action and the edit's src are required; their handlers say so (the declared
// arguments stay optional so that the route's defaults parse, and they may come in the body).
func mediaRoutes() []Route {
	t := PostTypeByName(TypeAttachment)
	col, item := t.Collection(), t.Collection()+"/{id}"
	routes := []Route{
		{Name: "cms.media.list", Method: "GET", Interface: CMS, Path: col, Server: AtEdge, Args: t.collectionArgs()},
		{Name: "cms.media.create", Method: "POST", Interface: CMS, Path: col, Server: AtOrigin, Auth: AuthStaff, Cap: CapUploadFiles,
			Args: []Arg{{Name: "generate_sub_sizes", Type: ArgBool, Default: "true", Description: "Whether to generate image sub sizes."}}},
		{Name: "cms.media.get", Method: "GET", Interface: CMS, Path: item, Server: AtEdge, Args: t.itemArgs()},
	}
	for _, m := range []string{"POST", "PUT", "PATCH"} {
		routes = append(routes, Route{Name: "cms.media.update", Method: m, Interface: CMS, Path: item, Server: AtOrigin, Auth: AuthStaff, Cap: t.Caps.Edit})
	}
	return append(routes,
		Route{Name: "cms.media.delete", Method: "DELETE", Interface: CMS, Path: item, Server: AtOrigin, Auth: AuthStaff, Cap: t.Caps.Delete,
			Args: []Arg{{Name: "force", Type: ArgBool, Default: "false", Description: "Whether to bypass Trash and force deletion."}}},
		Route{Name: "cms.media.postprocess", Method: "POST", Interface: CMS, Path: item + "/post-process", Server: AtOrigin, Auth: AuthStaff, Cap: CapUploadFiles,
			Args: []Arg{{Name: "action", Type: ArgString, Enum: []string{"create-image-subsizes"}}}},
		Route{Name: "cms.media.edit", Method: "POST", Interface: CMS, Path: item + "/edit", Server: AtOrigin, Auth: AuthStaff, Cap: CapUploadFiles,
			Args: []Arg{
				{Name: "src", Type: ArgString, Description: "URL to the edited image file."},
				{Name: "rotation", Type: ArgInt, HasMin: true, Min: 1, HasMax: true, Max: 359, Description: "The amount to rotate the image clockwise in degrees. DEPRECATED: Use `modifiers` instead."},
			}},
	)
}

// MediaTypes are the media_type values of the media collection filter, each matching the MIME
// types of its top-level type.
var MediaTypes = []string{"image", "video", "text", "application", "audio"}

// mediaCollectionArgs are the filters the media collection adds to the posts collection's
// (WordPress's attachments controller: parent and parent_exclude, media_type, mime_type).
func mediaCollectionArgs() []Arg {
	return []Arg{
		{Name: "parent", Type: ArgIntList, Description: "Limit result set to items with particular parent IDs."},
		{Name: "parent_exclude", Type: ArgIntList, Description: "Limit result set to all items except those of a particular parent ID."},
		{Name: "media_type", Type: ArgStringList, Enum: MediaTypes, Description: "Limit result set to attachments of a particular media type or media types."},
		{Name: "mime_type", Type: ArgStringList, Description: "Limit result set to attachments of a particular MIME type or MIME types."},
	}
}

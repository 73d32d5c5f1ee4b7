package seed

import "vitrine/schema"

// This file holds the demo vocabularies. They are read-only: the generator only ever reads them.

// demoCurrencies are the currencies a demo store enables, the default (USD) first.
var demoCurrencies = [...]schema.Currency{
	{Code: "USD", Name: "US Dollar", Symbol: "$", Exponent: 2, Rate: "1"},
	{Code: "EUR", Name: "Euro", Symbol: "€", Exponent: 2, Rate: "0.92"},
	{Code: "JPY", Name: "Japanese Yen", Symbol: "¥", Exponent: 0, Rate: "151.3"},
}

// eurPercent converts a USD amount to the EUR amount a merchant would set by hand (before
// rounding to a shop price), matching the EUR rate above.
const eurPercent = 92

// titlePattern says how a product title is composed from a leaf's vocabulary.
type titlePattern int

const (
	// inheritPattern (the zero value) takes the department's pattern.
	inheritPattern titlePattern = iota
	// adjMaterialNoun: "Relaxed Linen Shirt" (the material is sometimes left out).
	adjMaterialNoun
	// brandNounSuffix: "Nimbus Wireless Earbuds Pro" (materials are brand names, adjectives
	// model suffixes, sometimes left out).
	brandNounSuffix
	// theAdjNoun: "The Silver Orchard" (book and toy titles).
	theAdjNoun
)

// optionDim is one option dimension of a leaf's variants ("Size": XS…XL).
type optionDim struct {
	name   string
	values []string
	// ordered dimensions (sizes, capacities) give a product a contiguous run of values; the
	// others a subset in list order.
	ordered bool
	// adjust is the percentage each value adds to the price (nil: none). A product's price is
	// that of its cheapest variant; dearer variants get a price override.
	adjust []int
}

// category is one node of the demo category tree. The vocabulary fields matter on leaves
// (products are filed under leaves). A nil slice, a zero pattern or a zero price inherits the
// parent's value; an empty non-nil slice means none (no materials, no options).
type category struct {
	name        string
	description string
	children    []category

	nouns      []string
	adjectives []string
	materials  []string
	pattern    titlePattern
	options    []optionDim
	// minPrice and maxPrice bound the product price in USD minor units.
	minPrice, maxPrice int64
	// intros open a product description; "{title}" is replaced by the product title. They
	// never put a verb after the title, which may be plural ("Trekking Poles").
	intros []string
	// sentences follow the intro.
	sentences []string
}

// department is a root category with what its products share.
type department struct {
	category
	// code prefixes the SKUs of the department's variants.
	code string
	// imageW and imageH are the pixel size of product images.
	imageW, imageH int
}

// imageViews name the successive images of a product (in alt texts).
var imageViews = [...]string{"front view", "detail", "in use", "alternate angle"}

// Option dimensions shared by several leaves.
var (
	apparelSizes  = optionDim{name: "Size", values: []string{"XS", "S", "M", "L", "XL"}, ordered: true}
	apparelColors = optionDim{name: "Color", values: []string{"Black", "White", "Navy", "Olive", "Sand", "Rust", "Heather Grey", "Sage"}}
	kidsAges      = optionDim{name: "Age", values: []string{"2Y", "4Y", "6Y", "8Y", "10Y"}, ordered: true}
	shoeSizes     = optionDim{name: "Size", values: []string{"US 6", "US 7", "US 8", "US 9", "US 10", "US 11", "US 12"}, ordered: true}
	leatherColors = optionDim{name: "Color", values: []string{"Black", "Tan", "Chestnut", "Off-White"}}
	homeColors    = optionDim{name: "Color", values: []string{"Oat", "Charcoal", "Sage", "Terracotta", "Sky"}}
	pieceSets     = optionDim{name: "Set", values: []string{"Single", "Set of 2", "Set of 4"}, ordered: true, adjust: []int{0, 85, 160}}
	smallToLarge  = optionDim{name: "Size", values: []string{"Small", "Medium", "Large"}, ordered: true, adjust: []int{0, 20, 45}}
	techColors    = optionDim{name: "Color", values: []string{"Black", "White", "Graphite", "Sky Blue", "Sand"}}
	packs         = optionDim{name: "Pack", values: []string{"Single", "2-Pack", "4-Pack"}, ordered: true, adjust: []int{0, 80, 150}}
	outdoorColors = optionDim{name: "Color", values: []string{"Forest", "Slate", "Ember", "Glacier", "Sand"}}
	outdoorSizes  = optionDim{name: "Size", values: []string{"S", "M", "L", "XL"}, ordered: true}
	scents        = optionDim{name: "Scent", values: []string{"Unscented", "Cedar & Sage", "Citrus Grove", "Lavender", "Sea Salt"}}
)

// departments is the demo category tree with its product vocabularies.
var departments = [...]department{
	{
		category: category{
			name:        "Apparel",
			description: "Everyday clothing in natural fibres, cut to last and made to be worn often.",
			adjectives:  []string{"Relaxed", "Classic", "Everyday", "Tailored", "Oversized", "Cropped", "Lightweight", "Heavyweight", "Garment-Dyed", "Vintage-Wash", "Slim", "Boxy"},
			materials:   []string{"Linen", "Cotton", "Merino", "Denim", "Corduroy", "Flannel", "Twill", "Jersey", "Poplin", "Canvas"},
			options:     []optionDim{apparelSizes, apparelColors},
			minPrice:    1900, maxPrice: 18900,
			intros: []string{
				"Meet the {title}.",
				"Designed in-house: the {title}.",
				"Say hello to the {title}, a quiet staple of our collection.",
				"Introducing the {title}, made to be worn often.",
			},
			sentences: []string{
				"Cut for an easy fit that layers well.",
				"Garment-washed for softness from the very first wear.",
				"Finished with reinforced seams for years of wear.",
				"Machine wash cold and line dry.",
				"Easy to dress up or down.",
				"Made in a family-run factory we have worked with for ten years.",
				"The fabric softens and takes on character with every wash.",
				"Our model is 5'10\" and wears a size M.",
				"Pre-shrunk, so the fit stays true wash after wash.",
			},
			children: []category{
				{name: "Women", description: "Dresses, tops and knitwear for every season.", children: []category{
					{name: "Dresses", description: "Easy dresses for warm days and layered ones for cooler evenings.",
						nouns: []string{"Midi Dress", "Wrap Dress", "Shirt Dress", "Slip Dress", "Tiered Dress", "Smock Dress"}},
					{name: "Tops", description: "Tees, blouses and tanks to build an outfit on.",
						nouns: []string{"Blouse", "Tank Top", "Tee", "Camisole", "Tunic", "Long-Sleeve Top"}},
					{name: "Knitwear", description: "Soft knits in merino, cashmere and cotton.",
						nouns:     []string{"Cardigan", "Sweater", "Turtleneck", "Sweater Vest", "Crewneck"},
						materials: []string{"Merino", "Cashmere", "Lambswool", "Cotton", "Alpaca"}},
				}},
				{name: "Men", description: "Shirts, trousers and outerwear that work hard and wash well.", children: []category{
					{name: "Shirts", description: "Oxford, flannel and camp-collar shirts.",
						nouns: []string{"Shirt", "Overshirt", "Oxford Shirt", "Camp Collar Shirt", "Henley"}},
					{name: "Trousers", description: "Chinos, work pants and shorts with a considered fit.",
						nouns:   []string{"Chinos", "Trousers", "Work Pants", "Shorts", "Joggers"},
						options: []optionDim{{name: "Waist", values: []string{"28", "30", "32", "34", "36", "38"}, ordered: true}, apparelColors}},
					{name: "Outerwear", description: "Jackets and coats for wind, rain and everything between.",
						nouns:     []string{"Jacket", "Chore Coat", "Parka", "Bomber Jacket", "Gilet", "Trucker Jacket"},
						materials: []string{"Waxed Cotton", "Wool", "Canvas", "Denim", "Corduroy", "Quilted"},
						minPrice:  7900, maxPrice: 29900},
				}},
				{name: "Kids", description: "Hard-wearing clothes for small people who never sit still.",
					nouns:     []string{"Tee", "Hoodie", "Romper", "Pinafore", "Joggers", "Dungarees"},
					materials: []string{"Organic Cotton", "Jersey", "Fleece", "Corduroy", "Denim"},
					options:   []optionDim{kidsAges, apparelColors},
					minPrice:  1200, maxPrice: 5900,
					sentences: []string{
						"Roomy enough to grow into.",
						"Soft seams and tag-free labels for sensitive skin.",
						"Tested for durability on playgrounds everywhere.",
						"Machine washable, again and again.",
						"Certified free of harmful substances (OEKO-TEX Standard 100).",
					}},
				{name: "Footwear", description: "Sneakers, boots and loafers built on durable soles.",
					nouns:      []string{"Sneakers", "Loafers", "Chelsea Boots", "Sandals", "Desert Boots", "Derby Shoes"},
					adjectives: []string{"Classic", "Everyday", "Low-Top", "High-Top", "Handmade", "Lightweight", "Weatherproof"},
					materials:  []string{"Leather", "Suede", "Canvas", "Knit", "Nubuck"},
					options:    []optionDim{shoeSizes, leatherColors},
					minPrice:   5900, maxPrice: 24900,
					sentences: []string{
						"Built on a stitched rubber sole that can be replaced.",
						"A cushioned insole with arch support keeps them comfortable all day.",
						"True to size; if you are between sizes, size up.",
						"The leather comes from a gold-rated tannery.",
						"Wear them in for a few days and they are yours for years.",
						"Made in Portugal by a third-generation shoemaker.",
					}},
				{name: "Accessories", description: "The finishing touches: bags, hats and scarves.",
					sentences: []string{
						"Made in small runs in our partner workshop.",
						"Thoughtful details make it easy to live with every day.",
						"Finished with hand-stitched details.",
						"A useful gift that actually gets used.",
						"Spot clean with a damp cloth.",
					},
					children: []category{
						{name: "Bags", description: "Totes, backpacks and weekenders for the daily carry.",
							nouns:      []string{"Tote Bag", "Backpack", "Crossbody Bag", "Weekender", "Belt Bag"},
							adjectives: []string{"Everyday", "Classic", "Roll-Top", "Compact", "Utility", "Travel"},
							materials:  []string{"Waxed Canvas", "Leather", "Nylon", "Recycled Polyester", "Canvas"},
							options:    []optionDim{apparelColors}},
						{name: "Hats & Scarves", description: "Warm layers for cold mornings.",
							nouns:      []string{"Beanie", "Bucket Hat", "Scarf", "Baseball Cap", "Snood"},
							adjectives: []string{"Ribbed", "Chunky", "Classic", "Fisherman", "Lightweight"},
							materials:  []string{"Wool", "Cashmere", "Cotton", "Alpaca", "Merino"},
							options:    []optionDim{apparelColors},
							minPrice:   1900, maxPrice: 8900},
					}},
			},
		},
		code: "APP", imageW: 1200, imageH: 1500,
	},
	{
		category: category{
			name:        "Home & Kitchen",
			description: "Cookware, tableware and textiles for a home that gets used.",
			adjectives:  []string{"Heritage", "Everyday", "Classic", "Handmade", "Modern", "Artisan", "Essential", "Nordic"},
			materials:   []string{"Stoneware", "Porcelain", "Ceramic", "Stainless", "Oak", "Linen", "Glass"},
			options:     []optionDim{smallToLarge},
			minPrice:    899, maxPrice: 24900,
			intros: []string{
				"Meet the {title}.",
				"Made for homes that actually get lived in: the {title}.",
				"Simple, sturdy and good to look at: the {title}.",
				"Introducing the {title}, built for daily use and years of it.",
			},
			sentences: []string{
				"Every piece is checked by hand before it leaves the workshop.",
				"Glazes and finishes are mixed in small batches, so no two pieces are quite alike.",
				"A lovely gift for a housewarming or a wedding.",
				"Dishwasher safe, though a gentle hand wash keeps it looking new.",
				"Shipped plastic-free, wrapped in recycled paper.",
			},
			children: []category{
				{name: "Cookware", description: "Pans and pots that go from hob to oven to table.",
					nouns:      []string{"Skillet", "Dutch Oven", "Saucepan", "Sauté Pan", "Stockpot", "Wok", "Braiser"},
					adjectives: []string{"Heritage", "Professional", "Everyday", "Induction-Ready", "Classic"},
					materials:  []string{"Cast-Iron", "Enamelled", "Stainless", "Carbon-Steel", "Copper-Core"},
					options: []optionDim{{name: "Diameter", values: []string{"20 cm", "24 cm", "28 cm", "32 cm"}, ordered: true, adjust: []int{0, 15, 30, 45}},
						homeColors},
					minPrice: 2900, maxPrice: 29900,
					sentences: []string{
						"Oven safe to 260 °C and at home on every hob, induction included.",
						"Made without PFAS, PFOA or lead.",
						"Its weight and balance make it a pleasure to cook with.",
						"Heats evenly, with no hot spots.",
						"Backed by our lifetime guarantee.",
					}},
				{name: "Coffee & Tea", description: "Everything for a better morning cup.",
					sentences: []string{
						"Designed with our friends at a local roastery.",
						"Every piece is checked by hand before it leaves the workshop.",
						"Dishwasher safe, though a gentle hand wash keeps it looking new.",
						"A lovely gift for the coffee lover in your life.",
						"Good mornings start with good tools.",
					},
					children: []category{
						{name: "Kettles", description: "Gooseneck, electric and stovetop kettles.",
							nouns:     []string{"Pour-Over Kettle", "Electric Kettle", "Stovetop Kettle", "Gooseneck Kettle"},
							materials: []string{"Ceramic", "Stainless", "Enamel", "Glass"},
							options: []optionDim{{name: "Capacity", values: []string{"0.6 L", "1.0 L", "1.7 L"}, ordered: true, adjust: []int{0, 12, 25}},
								{name: "Finish", values: []string{"Matte Black", "Brushed Steel", "Cream", "Copper"}}},
							minPrice: 2900, maxPrice: 17900},
						{name: "Brewers", description: "Drippers, presses and pots for every way of brewing.",
							nouns:     []string{"Pour-Over Dripper", "French Press", "Cold Brew Maker", "Moka Pot", "Tea Infuser"},
							materials: []string{"Ceramic", "Glass", "Stainless", "Porcelain", "Bamboo"},
							minPrice:  1400, maxPrice: 8900},
						{name: "Mugs & Cups", description: "Mugs, cups and tumblers, hand-glazed and stackable.",
							nouns:     []string{"Mug", "Espresso Cup", "Tumbler", "Travel Mug", "Latte Cup"},
							materials: []string{"Stoneware", "Porcelain", "Speckled", "Double-Wall Glass", "Enamel"},
							options:   []optionDim{pieceSets, homeColors},
							minPrice:  999, maxPrice: 3900},
					}},
				{name: "Tableware", description: "Plates, bowls and platters for everyday meals and long dinners.",
					nouns:     []string{"Dinner Plate", "Serving Bowl", "Salad Bowl", "Platter", "Pasta Bowl", "Side Plate"},
					materials: []string{"Stoneware", "Porcelain", "Olive Wood", "Hand-Glazed", "Speckled"},
					options:   []optionDim{pieceSets, homeColors},
					minPrice:  1200, maxPrice: 9900},
				{name: "Bedding", description: "Breathable sheets and covers for better sleep.",
					nouns:     []string{"Duvet Cover", "Sheet Set", "Pillowcase Pair", "Quilt", "Throw"},
					materials: []string{"Linen", "Percale", "Sateen", "Washed Cotton", "Waffle-Knit"},
					options: []optionDim{{name: "Size", values: []string{"Twin", "Full", "Queen", "King"}, ordered: true, adjust: []int{0, 15, 25, 35}},
						{name: "Color", values: []string{"White", "Oat", "Sage", "Clay", "Charcoal"}}},
					minPrice: 3900, maxPrice: 29900,
					sentences: []string{
						"Stonewashed for a soft, lived-in feel from the first night.",
						"Breathable and comfortable in every season.",
						"OEKO-TEX certified, with no harmful substances.",
						"Gets softer with every wash.",
						"Fastens with corozo buttons that will not crack in the wash.",
					}},
				{name: "Home Decor", description: "Vases, candles and lamps that make a room feel lived in.",
					nouns:     []string{"Vase", "Scented Candle", "Planter", "Wall Mirror", "Table Lamp", "Bookends"},
					materials: []string{"Ceramic", "Rattan", "Brass", "Terracotta", "Smoked Glass", "Travertine"},
					minPrice:  1499, maxPrice: 14900,
					sentences: []string{
						"Handmade, so small variations are part of its charm.",
						"Pairs beautifully with natural materials and soft light.",
						"A lovely gift for a housewarming.",
						"Shipped plastic-free, wrapped in recycled paper.",
						"Designed in our studio and made by a small workshop.",
					}},
			},
		},
		code: "HOM", imageW: 1600, imageH: 1600,
	},
	{
		category: category{
			name:        "Electronics",
			description: "Audio, smart home and desk gear, chosen for good design and long support.",
			adjectives:  []string{"Pro", "Mini", "Max", "Lite", "2", "Air", "SE", "Plus"},
			materials:   []string{"Nimbus", "Aurora", "Pulse", "Vertex", "Halo", "Echo", "Orbit", "Lumen"},
			pattern:     brandNounSuffix,
			options:     []optionDim{techColors},
			minPrice:    1499, maxPrice: 29900,
			intros: []string{
				"Meet the {title}.",
				"Set up in a minute, then it simply works: the {title}.",
				"Our most recommended pick in its class: the {title}.",
				"Introducing the {title}, tested by our team for months before release.",
			},
			sentences: []string{
				"Firmware updates are delivered over the air for at least five years.",
				"The housing is made from 65% recycled aluminium and plastics.",
				"Covered by a two-year warranty and our 30-day return policy.",
				"Packaging is plastic-free and fully recyclable.",
				"Designed to be repaired, with replacement parts sold separately.",
			},
			children: []category{
				{name: "Audio", description: "Headphones and speakers tuned for music, not marketing.",
					sentences: []string{
						"Pairs in seconds with phones, tablets and laptops.",
						"Battery life comfortably covers a full week of normal use.",
						"Tuned by our audio team for a warm, detailed sound.",
						"Multipoint Bluetooth switches between two devices automatically.",
						"Covered by a two-year warranty and our 30-day return policy.",
					},
					children: []category{
						{name: "Headphones", description: "Over-ear, on-ear and in-ear, wired and wireless.",
							nouns:    []string{"Wireless Headphones", "Noise-Cancelling Headphones", "Wireless Earbuds", "Studio Headphones", "Sport Earbuds"},
							minPrice: 4900, maxPrice: 29900},
						{name: "Speakers", description: "Portable, bookshelf and smart speakers.",
							nouns:    []string{"Bluetooth Speaker", "Bookshelf Speakers", "Smart Speaker", "Soundbar", "Portable Speaker"},
							minPrice: 3900, maxPrice: 29900},
					}},
				{name: "Smart Home", description: "Plugs, bulbs and sensors that work with the hubs you already own.",
					nouns:    []string{"Smart Plug", "Smart Bulb", "Video Doorbell", "Thermostat", "Motion Sensor", "Light Strip"},
					options:  []optionDim{packs},
					minPrice: 1499, maxPrice: 19900,
					sentences: []string{
						"Works with Google Home, Alexa and Apple Home.",
						"Set up in the app in under two minutes.",
						"Runs locally over Matter, so it keeps working when the internet does not.",
						"Firmware updates are delivered over the air for at least five years.",
						"Packaging is plastic-free and fully recyclable.",
					}},
				{name: "Cameras", description: "Instant, action and compact cameras, and webcams for the daily call.",
					nouns:    []string{"Instant Camera", "Action Camera", "Webcam", "Compact Camera", "Dash Cam"},
					minPrice: 5900, maxPrice: 29900},
				{name: "Computer Accessories", description: "Keyboards, mice, hubs and stands for a better desk.",
					nouns:    []string{"Mechanical Keyboard", "Wireless Mouse", "USB-C Hub", "Laptop Stand", "Monitor Light", "Trackpad"},
					minPrice: 1999, maxPrice: 17900},
				{name: "Power & Cables", description: "Chargers, power banks and cables that outlast the devices they charge.",
					nouns: []string{"Charging Cable", "Wall Charger", "Power Bank", "Wireless Charger", "Car Charger"},
					options: []optionDim{{name: "Color", values: []string{"Black", "White"}},
						{name: "Length", values: []string{"1 m", "2 m"}, ordered: true, adjust: []int{0, 20}}},
					minPrice: 1499, maxPrice: 7900},
			},
		},
		code: "ELE", imageW: 1600, imageH: 1600,
	},
	{
		category: category{
			name:        "Outdoors",
			description: "Gear for trails, campsites, bikes and gardens, tested in the field.",
			adjectives:  []string{"Trail", "Alpine", "Summit", "Basecamp", "Weatherproof", "Packable", "Rugged", "Backcountry"},
			materials:   []string{"Ripstop", "Recycled", "Waxed-Cotton", "Ultralight", "Aluminium", "Merino"},
			options:     []optionDim{outdoorColors},
			minPrice:    1999, maxPrice: 24900,
			intros: []string{
				"Meet the {title}.",
				"Tested on trails from the Alps to the Cascades: the {title}.",
				"Light, tough and simple: the {title}.",
				"Introducing the {title}, made to earn its place in the pack.",
			},
			sentences: []string{
				"Lighter than you would expect, and it packs down small.",
				"Repairable: spare parts are available for ten years.",
				"Field-tested by our team over two seasons before release.",
				"Every purchase funds one square metre of trail restoration.",
				"Backed by a lifetime guarantee against defects.",
				"Bright accents make it easy to find at dusk.",
			},
			children: []category{
				{name: "Camping", description: "Shelter, sleep and a hot meal under the stars.", children: []category{
					{name: "Tents", description: "Backpacking, family and three-season tents.",
						nouns:     []string{"Dome Tent", "Backpacking Tent", "Tarp Shelter", "Family Tent", "Tunnel Tent"},
						materials: []string{"Ripstop", "Ultralight", "Recycled", "Silnylon"},
						options: []optionDim{{name: "Capacity", values: []string{"1-Person", "2-Person", "3-Person", "4-Person"}, ordered: true, adjust: []int{0, 18, 35, 55}},
							outdoorColors},
						minPrice: 9900, maxPrice: 29900},
					{name: "Sleeping Gear", description: "Bags, pads and pillows for a good night outside.",
						nouns:     []string{"Sleeping Bag", "Sleeping Pad", "Camp Pillow", "Hammock", "Sleeping Bag Liner"},
						materials: []string{"Down-Filled", "Synthetic", "Ultralight", "Recycled", "Insulated"},
						options: []optionDim{{name: "Length", values: []string{"Regular", "Long"}, ordered: true, adjust: []int{0, 10}},
							outdoorColors},
						minPrice: 2900, maxPrice: 29900},
					{name: "Camp Kitchen", description: "Stoves, cook sets and bottles that pack down small.",
						nouns:     []string{"Camp Stove", "Cook Set", "Insulated Bottle", "Enamel Mug", "Cooler", "Spork Set"},
						materials: []string{"Titanium", "Stainless", "Aluminium", "Enamel", "Insulated"},
						minPrice:  999, maxPrice: 14900},
				}},
				{name: "Hiking", description: "Packs, poles and lights for a day on the hill or a week on the trail.",
					nouns:      []string{"Daypack", "Trekking Poles", "Headlamp", "Hip Pack", "Water Filter", "Trail Gaiters"},
					adjectives: []string{"Trail", "Alpine", "Summit", "Basecamp", "Packable", "Rugged", "Backcountry", "Ridge", "Everyday", "Ultralight"},
					materials:  []string{}},
				{name: "Cycling", description: "Helmets, lights and bags for commuting and long rides.",
					nouns:      []string{"Bike Helmet", "Saddle Bag", "Bike Light Set", "Bike Lock", "Handlebar Bag", "Frame Bag"},
					adjectives: []string{"Commuter", "Urban", "Road", "Gravel", "Rugged", "Everyday", "Night", "Touring"},
					materials:  []string{},
					minPrice:   1999, maxPrice: 19900},
				{name: "Garden", description: "Tools that make a small garden a joy to keep.",
					nouns:      []string{"Garden Trowel", "Pruning Shears", "Watering Can", "Garden Gloves", "Raised Bed", "Kneeler"},
					adjectives: []string{"Heritage", "Everyday", "Professional", "Compact", "Classic"},
					materials:  []string{"Stainless", "Ash-Handled", "Galvanised", "Cedar", "Recycled"},
					options:    []optionDim{},
					minPrice:   999, maxPrice: 12900,
					intros: []string{
						"Meet the {title}.",
						"Made for small gardens and long afternoons: the {title}.",
						"Introducing the {title}, built to last a lifetime of seasons.",
					},
					sentences: []string{
						"Comfortable in the hand, even after an hour of weeding.",
						"Rinse and dry after use and it will last for decades.",
						"Hangs from a leather loop when the work is done.",
						"Backed by a lifetime guarantee.",
						"A thoughtful gift for anyone with a garden, a balcony or a windowsill.",
					}},
			},
		},
		code: "OUT", imageW: 1600, imageH: 1600,
	},
	{
		category: category{
			name:        "Beauty",
			description: "Skincare, hair care and fragrance with short, honest ingredient lists.",
			adjectives:  []string{"Gentle", "Daily", "Hydrating", "Brightening", "Nourishing", "Restorative", "Calming", "Overnight"},
			materials:   []string{"Rosehip", "Vitamin C", "Hyaluronic", "Oat", "Green Tea", "Bakuchiol", "Neroli", "Squalane"},
			minPrice:    699, maxPrice: 8900,
			intros: []string{
				"Meet the {title}.",
				"A small daily ritual: the {title}.",
				"Two years of work in our lab went into the {title}.",
				"One of our best-loved formulas: the {title}.",
			},
			sentences: []string{
				"Vegan, cruelty-free and dermatologically tested.",
				"Comes in a recyclable glass bottle; refills are available.",
				"A little goes a long way: one bottle lasts about three months.",
				"Made in small batches in our lab in Lyon.",
				"Patch test before first use.",
				"No parabens, sulphates or synthetic dyes.",
			},
			children: []category{
				{name: "Skincare", description: "Cleansers, serums and moisturisers for every skin type.",
					nouns:   []string{"Face Serum", "Moisturiser", "Cleansing Balm", "Eye Cream", "Face Oil", "Toner"},
					options: []optionDim{{name: "Size", values: []string{"30 ml", "50 ml", "100 ml"}, ordered: true, adjust: []int{0, 45, 110}}}},
				{name: "Hair Care", description: "Shampoos, conditioners and treatments without the silicones.",
					nouns:   []string{"Shampoo", "Conditioner", "Hair Oil", "Styling Cream", "Hair Mask"},
					options: []optionDim{{name: "Size", values: []string{"100 ml", "250 ml", "500 ml"}, ordered: true, adjust: []int{0, 60, 140}}}},
				{name: "Fragrance", description: "Perfumes and mists blended in small batches.",
					nouns:      []string{"Eau de Parfum", "Solid Perfume", "Body Mist", "Perfume Oil"},
					adjectives: []string{"Bright", "Warm", "Velvet", "Midnight", "Morning", "Wild"},
					materials:  []string{"Neroli", "Sandalwood", "Fig", "Vetiver", "Bergamot", "Rose"},
					options:    []optionDim{{name: "Size", values: []string{"10 ml", "50 ml", "100 ml"}, ordered: true, adjust: []int{0, 150, 260}}},
					minPrice:   1900, maxPrice: 8900,
					sentences: []string{
						"Blended in small batches in Grasse.",
						"Opens bright, then settles into a warm, woody base.",
						"Lasts six to eight hours on skin.",
						"Comes in a refillable glass bottle.",
						"Vegan and cruelty-free.",
					}},
				{name: "Bath & Body", description: "Washes, lotions and soaps that leave skin soft.",
					nouns:   []string{"Body Wash", "Hand Cream", "Body Lotion", "Bath Salts", "Bar Soap", "Body Scrub"},
					options: []optionDim{scents}},
			},
		},
		code: "BEA", imageW: 1600, imageH: 1600,
	},
	{
		category: category{
			name:        "Books",
			description: "Fiction, cookbooks, travel and science, picked by our staff.",
			adjectives:  []string{"Quiet", "Silver", "Last", "Hidden", "Winter", "Painted", "Distant", "Burning", "Glass", "Northern"},
			nouns:       []string{"Orchard", "Harbour", "Cartographer", "Garden", "Archive", "Tide", "Lantern", "Island", "Signal"},
			pattern:     theAdjNoun,
			options: []optionDim{{name: "Format", values: []string{"Paperback", "Hardcover", "E-book", "Audiobook"},
				adjust: []int{0, 60, -35, 20}}},
			minPrice: 999, maxPrice: 4999,
			intros: []string{
				"{title} is a book we keep pressing into friends' hands.",
				"Our booksellers chose {title} as a pick of the month.",
				"{title}: one of the finest books of the year.",
				"Readers tell us {title} stayed with them for weeks.",
			},
			sentences: []string{
				"Beautifully produced, with a sewn binding and heavy paper.",
				"Signed copies are available while stocks last.",
				"It would make a wonderful gift.",
				"The audiobook is read by the author.",
				"Shortlisted for three major prizes this year.",
				"It is the perfect size for a coat pocket or a weekend bag.",
				"Translated into more than twenty languages.",
			},
			children: []category{
				{name: "Fiction", description: "Novels and short stories we could not put down."},
				{name: "Cookbooks", description: "Recipes for weeknights, weekends and feasts.",
					pattern:    adjMaterialNoun,
					adjectives: []string{"Simple", "Seasonal", "Weeknight", "Plant-Based", "One-Pot", "Coastal", "Slow"},
					nouns:      []string{"Suppers", "Baking", "Bread", "Vegetables", "Feasts", "Soups", "Desserts"},
					materials:  []string{}},
				{name: "Travel", description: "Guides and essays for slow, curious travel.",
					pattern:    adjMaterialNoun,
					adjectives: []string{"Walking", "Hidden", "Slow", "Wild", "Coastal", "Eating"},
					nouns:      []string{"Lisbon", "Kyoto", "Scotland", "Patagonia", "Sicily", "Oaxaca", "Iceland", "Vermont"},
					materials:  []string{}},
				{name: "Science & Nature", description: "Popular science and nature writing.",
					adjectives: []string{"Secret", "Hidden", "Curious", "Brief", "Wild", "Invisible"},
					nouns:      []string{"Life of Trees", "History of Rivers", "World of Fungi", "Language of Birds", "Physics of Clouds", "Story of Soil"}},
				{name: "Children's Books", description: "Picture books and first chapter books.",
					adjectives: []string{"Sleepy", "Brave", "Little", "Curious", "Very Busy", "Smallest"},
					nouns:      []string{"Fox", "Bear", "Dragon", "Lighthouse", "Submarine", "Owl", "Tractor"},
					options:    []optionDim{{name: "Format", values: []string{"Board Book", "Paperback", "Hardcover"}, adjust: []int{0, 10, 60}}},
					minPrice:   799, maxPrice: 2499},
			},
		},
		code: "BKS", imageW: 1000, imageH: 1500,
	},
	{
		category: category{
			name:        "Toys & Games",
			description: "Games, puzzles and building sets for all ages, with no batteries required.",
			adjectives:  []string{"Classic", "Deluxe", "Family", "Pocket", "Wooden", "Starter"},
			materials:   []string{"Harbour", "Orchard", "Skyline", "Meadow", "Lighthouse", "Forest"},
			minPrice:    999, maxPrice: 12900,
			intros: []string{
				"Meet the {title}.",
				"A hit with our test family of five: the {title}.",
				"Built to be played with, again and again: the {title}.",
				"Introducing the {title}, and the end of screen time.",
			},
			sentences: []string{
				"Everything packs back into its sturdy box.",
				"It meets EN 71 and ASTM F963 toy safety standards.",
				"A great gift for birthdays and holidays.",
				"Designed in our studio and made responsibly.",
			},
			children: []category{
				{name: "Board Games", description: "Strategy, party and cooperative games for the table.",
					nouns:   []string{"Strategy Game", "Party Game", "Co-op Adventure", "Word Game", "Card Game"},
					options: []optionDim{},
					sentences: []string{
						"Rules fit on a single card; a game takes about 30 minutes.",
						"For 2 to 6 players, ages 8 and up.",
						"Everything packs back into its sturdy box.",
						"Easy to learn, with enough depth for a hundred games.",
						"A great gift for birthdays and holidays.",
					}},
				{name: "Puzzles", description: "Jigsaws from 500 to 1500 pieces.",
					nouns:      []string{"Jigsaw Puzzle"},
					adjectives: []string{"Vintage", "Botanical", "Panoramic", "Illustrated", "Nocturnal"},
					materials:  []string{"Map", "Garden", "Cityscape", "Ocean", "Mountain", "Library"},
					options:    []optionDim{{name: "Pieces", values: []string{"500 pieces", "1000 pieces", "1500 pieces"}, ordered: true, adjust: []int{0, 25, 50}}},
					minPrice:   1499, maxPrice: 3999,
					sentences: []string{
						"Printed with plant-based inks on thick recycled board.",
						"Every piece is cut to a unique shape.",
						"Comes with a poster of the full image.",
						"A perfect rainy-weekend project.",
					}},
				{name: "Building Sets", description: "Wooden and magnetic sets for builders of every age.",
					nouns:      []string{"Building Set", "Marble Run", "Construction Kit", "Block Set"},
					adjectives: []string{"Wooden", "Magnetic", "Modular", "Starter", "Deluxe"},
					materials:  []string{"Castle", "Rocket", "Treehouse", "Harbour", "Railway"},
					options:    []optionDim{{name: "Edition", values: []string{"Starter", "Explorer", "Master"}, ordered: true, adjust: []int{0, 60, 140}}},
					sentences: []string{
						"Made from FSC-certified wood and water-based paints.",
						"Suitable for ages 3 and up.",
						"Compatible with every other set in the range.",
						"Everything packs back into its sturdy box.",
					}},
				{name: "Plush", description: "Soft toys made from organic cotton and recycled fill.",
					nouns:      []string{"Teddy Bear", "Plush Fox", "Plush Whale", "Plush Bunny", "Plush Elephant"},
					adjectives: []string{"Cuddly", "Organic", "Sleepy", "Classic", "Heirloom"},
					materials:  []string{},
					options:    []optionDim{smallToLarge},
					minPrice:   1499, maxPrice: 5900,
					sentences: []string{
						"Made from soft organic cotton and filled with recycled fibre.",
						"Safe from birth, with embroidered eyes.",
						"Machine washable at 30 °C.",
						"A first friend for years of cuddles.",
					}},
			},
		},
		code: "TOY", imageW: 1600, imageH: 1600,
	},
}

// postTitles are editorial title templates; "{topic}" is replaced by a topic.
var postTitles = [...]string{
	"A Beginner's Guide to {topic}",
	"Everything You Need to Know About {topic}",
	"{topic}: Our Team's Favourites",
	"The Case for {topic}",
	"Notes on {topic}",
	"Five Mistakes to Avoid with {topic}",
	"What We Learned About {topic} This Year",
	"Getting Started with {topic}",
	"Behind the Scenes: {topic}",
	"How We Test {topic}",
}

// postTopics are the subjects of posts, in title case (lowercased inside sentences, so no proper
// nouns).
var postTopics = [...]string{
	"Cast-Iron Cookware", "Linen Bedding", "Pour-Over Coffee", "Layering for Autumn", "Wireless Headphones",
	"Trail Running", "Houseplant Care", "Minimalist Skincare", "Slow Fashion", "Camp Cooking",
	"Home Offices", "Sourdough Baking", "Winter Reading", "Lightweight Backpacking", "Natural Fibres",
	"Smart Lighting", "Board Game Nights", "Tea Rituals", "Capsule Wardrobes", "Bike Commuting",
	"Small-Space Gardening", "Gift Giving", "Repairing Your Gear", "Hand-Glazed Ceramics",
}

// postOpeners open a post's first paragraph.
var postOpeners = [...]string{
	"We get more questions about {topic} than about almost anything else we sell.",
	"A few years ago, hardly anyone on our team thought twice about {topic}.",
	"There is a lot of advice about {topic} out there, and not all of it holds up.",
	"This season we spent a lot of time thinking about {topic}.",
	"Ask ten people about {topic} and you will get eleven opinions.",
	"When we started the shop, {topic} was a small corner of the catalog.",
}

// postSentences make up the body of a post.
var postSentences = [...]string{
	"The good news is that it is simpler than it looks.",
	"Most of what matters comes down to a handful of habits.",
	"We asked the people who design our products what they actually do at home.",
	"The designers we asked gave surprisingly consistent answers: keep it simple.",
	"Start small, and add only what you find yourself missing.",
	"Quality matters more than quantity, every single time.",
	"It is worth spending a little more on the things you use every day.",
	"Cheap versions tend to cost more in the long run.",
	"Look for materials that age well rather than ones that look perfect on day one.",
	"A little maintenance goes a long way.",
	"We tested a dozen approaches over the past few months.",
	"Some of what we found surprised us; some confirmed what we already suspected.",
	"The biggest difference came from the simplest change.",
	"If you only take one thing away from this post, make it this.",
	"Our customers have taught us a great deal about {topic}.",
	"Many of you wrote in with tips, and we have included the best of them here.",
	"There is no single right answer, only the one that fits how you live.",
	"It is easy to overthink {topic}.",
	"Give yourself permission to experiment.",
	"Mistakes are part of the process, and most of them are easy to fix.",
	"We keep coming back to the same few favourites.",
	"Seasonality plays a bigger role than most people expect.",
	"Timing is everything, so plan a little ahead.",
	"Good tools make the work more enjoyable, but they are not the whole story.",
	"Buy once, use often, and repair when you can.",
	"Our team in the warehouse has strong opinions here, too.",
	"Try it for a week before you decide.",
	"The details are where the real differences show up.",
	"You do not need to buy anything new to get started.",
	"We have linked the pieces we mention at the end of this post.",
	"Comfort and practicality should come first.",
	"It took us a while to get this right.",
}

// postClosers end a post's last paragraph.
var postClosers = [...]string{
	"Let us know in the comments how {topic} works for you.",
	"We will keep updating this post as we learn more.",
	"Have a question we did not answer? Our team reads every comment.",
	"Thanks for reading, and see you next time.",
	"If you try any of this, we would love to hear how it goes.",
	"More on {topic} soon.",
}

// postExcerpts summarise a post.
var postExcerpts = [...]string{
	"Our notes on {topic}, from the team that tests everything we sell.",
	"A short, practical guide to {topic}.",
	"What we have learned about {topic}, and what we would do differently.",
	"Tips, favourites and a few mistakes to avoid with {topic}.",
}
